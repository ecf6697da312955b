/*
 * launch.c — checking launch arguments and starting a kernel on the CPU.
 *
 * A launch happens long after compilation, with no source position to
 * point at, so every message names the kernel and the parameter instead:
 *
 *   matmul expects 3 arguments, got 2
 *   matmul: B has dtype float32, expected float16
 *   matmul: A.shape[1] is 96, expected 128
 *   matmul: n is 128 from A.shape[0] but 96 from B.shape[1]
 *
 * Shape variables.  A parameter dimension whose extent is a bare run-time
 * shape variable (T.dynamic / T.symbolic) binds that variable from the
 * tensor's extent; the first binding wins and every later one must agree.
 * Extents that are expressions of shape variables (e.g. `n * 2`) are
 * evaluated once everything is bound and checked like constants.  Strides
 * declared on a buffer are treated the same way against the tensor's
 * actual strides.  A variable no tensor determines is an error.
 *
 * Scalars come as 0-dimensional tensors whose data points at one value.
 * Integer parameters accept any integer or bool dtype; float parameters
 * accept integers and float32/float64.  The value is converted into a
 * per-launch slot of the parameter's own dtype, which is what the
 * generated code reads.  (float16/bfloat16/float8 scalars must match
 * exactly: their bits are copied.)
 *
 * Tensors without strides are row-major contiguous; given strides (in
 * elements, any sign, zero for broadcast) are passed through unchanged,
 * since generated code indexes with run-time strides.  Except on CUDA for
 * the parameters the kernel reads with vector copies (IrBuffer.contiguous,
 * as TileLang assumes of its T.Tensor arguments): a device tensor must be
 * compact and aligned (a clear error otherwise), a strided host tensor is
 * replaced by a compact copy for the launch (cuda_contract below).
 *
 * The checks above are the same for every target; only the last step
 * differs (run_c / run_cuda below).  The CUDA target cannot ask generated
 * host code for the grid, so its grid extents are evaluated here from the
 * IR with the same small evaluator that checks extent expressions.
 *
 * ts_launch_device (ts_kernel_launch_device) makes the same checks on
 * tensors whose data are CUDA device addresses and queues the kernel on
 * the caller's stream without copying anything (ts_cuda_run_device).
 *
 * Errors are appended to the context's diagnostic and returned; nothing
 * here longjmps, so the public entry point needs no handler.
 */
#include "runtime/launch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/world.h"
#include "target/c/c_target.h"
#include "target/cuda/cuda_target.h"

/* Per-launch storage, freed on every exit. */
typedef struct Launch {
    TsDiag *d;
    const IrKernel *ir;
    const char *kname;      /* kernel name for messages */
    const TsTensor *args;
    void **data;            /* [nparams] */
    const int64_t **shape;  /* [nparams] */
    const int64_t **strides;/* [nparams] */
    int64_t *stride_store;  /* computed row-major strides */
    uint64_t *slots;        /* [nparams] scalar values in the param's dtype */
    int64_t *vars;          /* [nshape_vars] bound values */
    int *bound_p, *bound_d; /* where each var was bound: param and dim (-1: not yet) */
    int *bound_stride;      /* 1: bound from a stride, 0: from an extent */
    int on_device;          /* 1: tensor data are CUDA device addresses (ts_launch_device) */
    void *stream;           /* CUstream for on_device launches */
    struct TsPlan **plan;   /* non-NULL: prepare a launch there instead of launching (ts_launch_prepare) */
    void *heap;             /* the arrays above when they do not fit in `small` (else NULL) */
    _Alignas(16) unsigned char small[2048]; /* the arrays above for small kernels */
} Launch;

TS_PRINTF(3, 4) static TsStatus fail(Launch *L, TsStatus st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ts_diag_vadd(L->d, (TsLoc){0}, "error", fmt, ap);
    va_end(ap);
    L->d->status = st;
    return st;
}

static const char *pname(const Launch *L, int p) {
    const char *n = L->ir->params.v[p].name;
    return n ? n : "?";
}

static int shape_var_index(const IrKernel *ir, const IrVar *v) {
    for (int j = 0; j < ir->shape_vars.n; j++)
        if (ir->shape_vars.v[j] == v) return j;
    for (int j = 0; j < ir->shape_vars.n; j++)
        if (ir->shape_vars.v[j]->id == v->id) return j;
    return -1;
}

/* Value of a scalar parameter's slot as int64 / double. */
static int64_t slot_int(const Launch *L, int p) {
    const IrVar *v = L->ir->params.v[p].var;
    const void *s = &L->slots[p];
    switch (v->dt) {
    case TS_BOOL: case TS_UINT8: return *(const uint8_t *)s;
    case TS_INT8: return *(const int8_t *)s;
    case TS_INT16: return *(const int16_t *)s;
    case TS_UINT16: return *(const uint16_t *)s;
    case TS_INT32: return *(const int32_t *)s;
    case TS_UINT32: return *(const uint32_t *)s;
    case TS_FLOAT32: return (int64_t)*(const float *)s;
    case TS_FLOAT64: return (int64_t)*(const double *)s;
    default: return *(const int64_t *)s;
    }
}

/* Integer value of a shape expression over bound variables and scalars;
 * 0 if it cannot be evaluated here (then it is not checked). */
static int eval(const Launch *L, const IrExpr *e, int64_t *out) {
    int64_t a, b;
    switch (e->kind) {
    case IR_E_INT: *out = e->ival; return 1;
    case IR_E_VAR:
        if (e->var->kind == IR_VAR_SHAPE) {
            int j = shape_var_index(L->ir, e->var);
            if (j < 0 || L->bound_p[j] < 0) return 0;
            *out = L->vars[j];
            return 1;
        }
        if (e->var->kind == IR_VAR_SCALAR) {
            for (int p = 0; p < L->ir->params.n; p++)
                if (L->ir->params.v[p].var == e->var && !L->ir->params.v[p].buf) {
                    *out = slot_int(L, p);
                    return 1;
                }
        }
        return 0;
    case IR_E_CAST:
        if (!ts_dtype_is_int(e->dt)) return 0;
        return eval(L, e->un.a, out);
    case IR_E_NEG:
        if (!eval(L, e->un.a, &a)) return 0;
        *out = -a;
        return 1;
    case IR_E_BIN:
        if (!eval(L, e->bin.a, &a) || !eval(L, e->bin.b, &b)) return 0;
        switch (e->bin.op) {
        case IR_ADD: *out = a + b; return 1;
        case IR_SUB: *out = a - b; return 1;
        case IR_MUL: *out = a * b; return 1;
        case IR_MIN: *out = a < b ? a : b; return 1;
        case IR_MAX: *out = a > b ? a : b; return 1;
        case IR_DIV:
            if (b == 0) return 0;
            *out = a / b;
            return 1;
        case IR_FLOORDIV:
            if (b == 0) return 0;
            *out = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
            return 1;
        case IR_FLOORMOD:
            if (b == 0) return 0;
            *out = a % b;
            if (*out != 0 && ((*out < 0) != (b < 0))) *out += b;
            return 1;
        default: return 0;
        }
    default: return 0;
    }
}

/* Bind or check shape variable j against `got` from param p, dim dd. */
static TsStatus bind(Launch *L, int j, int64_t got, int p, int dd, int from_stride) {
    if (L->bound_p[j] < 0) {
        L->vars[j] = got;
        L->bound_p[j] = p;
        L->bound_d[j] = dd;
        L->bound_stride[j] = from_stride;
        return TS_OK;
    }
    if (L->vars[j] == got) return TS_OK;
    return fail(L, TS_ERR_SHAPE, "%s: %s is %lld from %s.%s[%d] but %lld from %s.%s[%d]", L->kname,
                L->ir->shape_vars.v[j]->name, (long long)L->vars[j], pname(L, L->bound_p[j]),
                L->bound_stride[j] ? "strides" : "shape", L->bound_d[j], (long long)got, pname(L, p),
                from_stride ? "strides" : "shape", dd);
}

/* Pass 1 over one dimension's declared extent or stride: bind bare vars. */
static TsStatus bind_dim(Launch *L, const IrExpr *e, int64_t got, int p, int dd, int is_stride) {
    if (e && e->kind == IR_E_VAR && e->var->kind == IR_VAR_SHAPE) {
        int j = shape_var_index(L->ir, e->var);
        if (j < 0)
            return fail(L, TS_ERR_INTERNAL, "%s: shape variable %s of %s is not in the kernel's list",
                        L->kname, e->var->name, pname(L, p));
        return bind(L, j, got, p, dd, is_stride);
    }
    return TS_OK;
}

/* Pass 2: everything else must evaluate to what the tensor has. */
static TsStatus check_dim(Launch *L, const IrExpr *e, int64_t got, int p, int dd, int is_stride) {
    int64_t want;
    if (!e || (e->kind == IR_E_VAR && e->var->kind == IR_VAR_SHAPE)) return TS_OK;
    if (!eval(L, e, &want) || want == got) return TS_OK;
    if (e->kind == IR_E_INT)
        return fail(L, TS_ERR_SHAPE, "%s: %s.%s[%d] is %lld, expected %lld", L->kname, pname(L, p),
                    is_stride ? "strides" : "shape", dd, (long long)got, (long long)want);
    TsBuf t = {0};
    ir_print_expr(&t, e);
    TsStatus st = fail(L, TS_ERR_SHAPE, "%s: %s.%s[%d] is %lld, expected %s = %lld", L->kname,
                       pname(L, p), is_stride ? "strides" : "shape", dd, (long long)got,
                       ts_buf_str(&t), (long long)want);
    ts_buf_free(&t);
    return st;
}

/* Read a 0-dim tensor's value and store it in the slot in dtype `to`. */
static TsStatus scalar(Launch *L, int p) {
    const TsTensor *t = &L->args[p];
    const IrVar *v = L->ir->params.v[p].var;
    TsDType from = t->dtype, to = v->dt;
    if (!(t->ndim == 0 || (t->ndim == 1 && t->shape && t->shape[0] == 1)))
        return fail(L, TS_ERR_SHAPE, "%s: scalar parameter %s needs a 0-dimensional tensor, got %d dimensions",
                    L->kname, pname(L, p), t->ndim);
    if (!t->data) return fail(L, TS_ERR_INVALID, "%s: scalar parameter %s has NULL data", L->kname, pname(L, p));
    const TsDTypeInfo *fi = ts_dtype_info(from), *ti = ts_dtype_info(to);
    if (!fi || !ti) return fail(L, TS_ERR_DTYPE, "%s: scalar parameter %s has an invalid dtype", L->kname, pname(L, p));
    void *slot = &L->slots[p];
    if (from == to) {
        memcpy(slot, t->data, (size_t)(fi->bits + 7) / 8);
        return TS_OK;
    }
    int narrow_float = (fi->kind == 'f' && fi->bits < 32) || (ti->kind == 'f' && ti->bits < 32);
    if (narrow_float || (ti->kind != 'f' && fi->kind == 'f'))
        return fail(L, TS_ERR_DTYPE, "%s: scalar parameter %s has dtype %s, expected %s", L->kname,
                    pname(L, p), fi->name, ti->name);
    int64_t iv = 0;
    double fv = 0;
    const void *s = t->data;
    switch (from) {
    case TS_BOOL: case TS_UINT8: iv = *(const uint8_t *)s; break;
    case TS_INT8: iv = *(const int8_t *)s; break;
    case TS_INT16: iv = *(const int16_t *)s; break;
    case TS_UINT16: iv = *(const uint16_t *)s; break;
    case TS_INT32: iv = *(const int32_t *)s; break;
    case TS_UINT32: iv = *(const uint32_t *)s; break;
    case TS_INT64: case TS_UINT64: iv = *(const int64_t *)s; break;
    case TS_FLOAT32: fv = *(const float *)s; break;
    case TS_FLOAT64: fv = *(const double *)s; break;
    default: break;
    }
    if (fi->kind != 'f') fv = (double)iv;
    switch (to) {
    case TS_BOOL: *(uint8_t *)slot = iv != 0; break;
    case TS_INT8: *(int8_t *)slot = (int8_t)iv; break;
    case TS_UINT8: *(uint8_t *)slot = (uint8_t)iv; break;
    case TS_INT16: *(int16_t *)slot = (int16_t)iv; break;
    case TS_UINT16: *(uint16_t *)slot = (uint16_t)iv; break;
    case TS_INT32: *(int32_t *)slot = (int32_t)iv; break;
    case TS_UINT32: *(uint32_t *)slot = (uint32_t)iv; break;
    case TS_INT64: case TS_UINT64: *(int64_t *)slot = iv; break;
    case TS_FLOAT32: *(float *)slot = (float)fv; break;
    case TS_FLOAT64: *(double *)slot = fv; break;
    default: break;
    }
    return TS_OK;
}

static TsStatus tensor(Launch *L, int p, int64_t **stride_next) {
    const TsTensor *t = &L->args[p];
    const IrBuffer *b = L->ir->params.v[p].buf;
    if (t->dtype != b->dt)
        return fail(L, TS_ERR_DTYPE, "%s: %s has dtype %s, expected %s", L->kname, pname(L, p),
                    ts_dtype_name(t->dtype), ts_dtype_name(b->dt));
    if (t->ndim != b->ndim)
        return fail(L, TS_ERR_SHAPE, "%s: %s has %d dimension%s, expected %d", L->kname, pname(L, p),
                    t->ndim, t->ndim == 1 ? "" : "s", b->ndim);
    if (t->ndim > 0 && !t->shape)
        return fail(L, TS_ERR_INVALID, "%s: %s has a NULL shape", L->kname, pname(L, p));
    int64_t numel = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            return fail(L, TS_ERR_SHAPE, "%s: %s.shape[%d] is %lld", L->kname, pname(L, p), i,
                        (long long)t->shape[i]);
        numel *= t->shape[i];
    }
    if (!t->data && numel > 0)
        return fail(L, TS_ERR_INVALID, "%s: %s has NULL data", L->kname, pname(L, p));
    L->data[p] = t->data;
    L->shape[p] = t->shape;
    if (t->strides) {
        L->strides[p] = t->strides;
    } else {
        int64_t *s = *stride_next, acc = 1;
        *stride_next += t->ndim;
        for (int i = t->ndim - 1; i >= 0; i--) {
            s[i] = acc;
            acc *= t->shape[i];
        }
        L->strides[p] = s;
    }
    for (int i = 0; i < t->ndim; i++) {
        TsStatus st = bind_dim(L, b->shape ? b->shape[i] : NULL, t->shape[i], p, i, 0);
        if (!st && b->strides) st = bind_dim(L, b->strides[i], L->strides[p][i], p, i, 1);
        if (st) return st;
    }
    return TS_OK;
}

/* C target: the module computes the grid; the scheduler runs the blocks.
 * The distributed fields come from env (a world's rank), or describe rank
 * 0 of 1 with a private failure sink. */
static TsStatus run_c(Launch *L, TsKernel *k, const TsRankEnv *env) {
    const TsModuleC *m = k->cmod;
    const IrKernel *ir = L->ir;
    if (m->info.nparams != ir->params.n || m->info.nshape_vars != ir->shape_vars.n)
        return fail(L, TS_ERR_INTERNAL, "%s: the loaded module does not match the kernel's IR", L->kname);
    TsCArgs a;
    memset(&a, 0, sizeof a);
    a.abi_version = TS_C_ABI_VERSION;
    a.nparams = ir->params.n;
    a.data = L->data;
    a.shape = L->shape;
    a.strides = L->strides;
    a.shape_vars = L->vars;
    a.print = ts_c_print_stdout;
    TsCommSink solo;
    if (!env) ts_comm_sink_init(&solo);
    TsCommSink *sink = env ? env->sink : &solo;
    a.rank = env ? env->rank : 0;
    a.nranks = env ? env->nranks : 1;
    a.peer_base = env ? env->peer_base : NULL;
    a.heap_bytes = env ? env->heap_bytes : 0;
    a.sync_words = env ? env->sync_words : NULL;
    a.aborted = &sink->aborted;
    a.wait_timeout_ms = env ? env->wait_timeout_ms : ts_comm_default_timeout_ms();
    a.fail = ts_comm_sink_fail;
    a.fail_ctx = sink;
    a.now_ms = ts_comm_now_ms;
    a.ranks_per_node = env && env->ranks_per_node > 0 ? env->ranks_per_node : a.nranks;
    a.xport = env ? env->xport : NULL;
    a.xport_ctx = env ? env->xport_ctx : NULL;
    a.sync_off = env ? env->sync_off : 0;
    int64_t grid[3] = {1, 1, 1};
    m->grid(&a, grid);
    TsStatus st = ts_c_run(L->d, m, &a, grid, env && env->num_threads ? env->num_threads : k->opt.num_threads);
    fflush(stdout); /* T.print output before anything the caller prints */
    if (!env) {
        if (st == TS_OK && solo.msg.n) st = fail(L, TS_ERR_RUNTIME, "%s", ts_buf_str(&solo.msg));
        ts_comm_sink_free(&solo);
    }
    return st;
}

static TsStatus run_cuda_args(Launch *L, TsKernel *k, const TsRankEnv *env);

/* Is parameter p stored row-major compact?  (Strides of extent-1
 * dimensions do not matter; an empty tensor is.) */
static int is_compact(const Launch *L, int p, int ndim) {
    int64_t acc = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        if (L->shape[p][i] == 0) return 1;
        if (L->shape[p][i] != 1 && L->strides[p][i] != acc) return 0;
        acc *= L->shape[p][i];
    }
    return 1;
}

/* The bytes [*lo, *hi) that parameter p's elements cover. */
static void param_span(const Launch *L, int p, int ndim, int64_t es, const char **lo, const char **hi) {
    int64_t l = 0, h = 0;
    for (int i = 0; i < ndim; i++) {
        int64_t reach = (L->shape[p][i] - 1) * L->strides[p][i];
        if (reach < 0) l += reach;
        else h += reach;
    }
    *lo = (const char *)L->data[p] + l * es;
    *hi = (const char *)L->data[p] + (h + 1) * es;
}

/* Element by element between a strided tensor and its compact copy:
 * to_compact 1 gathers, 0 scatters back. */
static void move_compact(const Launch *L, int p, int ndim, int64_t es, char *compact, int to_compact) {
    int64_t idx[64] = {0}, n = 1;
    for (int i = 0; i < ndim; i++) n *= L->shape[p][i];
    for (int64_t e = 0; e < n; e++) {
        int64_t off = 0;
        for (int i = 0; i < ndim; i++) off += idx[i] * L->strides[p][i];
        char *t = (char *)L->data[p] + off * es;
        if (to_compact) memcpy(compact + e * es, t, (size_t)es);
        else memcpy(t, compact + e * es, (size_t)es);
        for (int i = ndim - 1; i >= 0 && ++idx[i] == L->shape[p][i]; i--) idx[i] = 0;
    }
}

/* The launch contract of IrBuffer.contiguous (target/cuda/lower_copy_cuda.c:
 * the kernel reads such a parameter with aligned vector copies and
 * constant strides).  A device tensor that breaks it is an error; a host
 * tensor that is strided is replaced by a compact copy (copy[p]), which
 * the launch moves to the device and back, unless it overlaps another
 * argument (a copy would break the aliasing).  The alignment of host
 * tensors is checked on their device copies (cuda_drv.c). */
static TsStatus cuda_contract(Launch *L, char **copy, int64_t *cstrides) {
    const IrKernel *ir = L->ir;
    int np = ir->params.n;
    for (int p = 0; p < np; p++) {
        const IrBuffer *b = ir->params.v[p].buf;
        if (!b || !b->contiguous || !L->data[p] || b->ndim > 64) continue;
        int64_t es = (ts_dtype_bits(b->dt) + 7) / 8, numel = 1;
        for (int i = 0; i < b->ndim; i++) numel *= L->shape[p][i];
        if (numel == 0) continue;
        if (L->on_device && b->align > 1 && (uintptr_t)L->data[p] % (uintptr_t)b->align)
            return fail(L, TS_ERR_INVALID,
                        "%s: %s's data address is not %d-byte aligned, which the CUDA kernel's vector copies need "
                        "(a view at an offset: pass a copy)",
                        L->kname, pname(L, p), b->align);
        if (is_compact(L, p, b->ndim)) continue;
        if (L->on_device) {
            TsBuf m = {0};
            for (int i = 0; i < b->ndim; i++) ts_buf_printf(&m, "%s%lld", i ? ", " : "", (long long)L->strides[p][i]);
            TsStatus st = fail(L, TS_ERR_INVALID,
                               "%s: %s has strides (%s); the CUDA kernel reads it with vector copies and needs it "
                               "contiguous (row-major): pass %s.contiguous()",
                               L->kname, pname(L, p), ts_buf_str(&m), pname(L, p));
            ts_buf_free(&m);
            return st;
        }
        const char *lo, *hi;
        param_span(L, p, b->ndim, es, &lo, &hi);
        for (int q = 0; q < np; q++) {
            const IrBuffer *c = ir->params.v[q].buf;
            if (q == p || !c || !L->data[q]) continue;
            const char *qlo, *qhi;
            param_span(L, q, c->ndim, (ts_dtype_bits(c->dt) + 7) / 8, &qlo, &qhi);
            if (qlo < hi && lo < qhi)
                return fail(L, TS_ERR_INVALID,
                            "%s: %s is strided and overlaps %s; the CUDA kernel needs %s contiguous (row-major): "
                            "pass a contiguous copy",
                            L->kname, pname(L, p), pname(L, q), pname(L, p));
        }
        copy[p] = malloc((size_t)(numel * es));
        if (!copy[p]) return fail(L, TS_ERR_NOMEM, "%s: out of memory", L->kname);
        move_compact(L, p, b->ndim, es, copy[p], 1);
        int64_t *s = cstrides + 64 * p, acc = 1;
        for (int i = b->ndim - 1; i >= 0; i--) {
            s[i] = acc;
            acc *= L->shape[p][i];
        }
    }
    return TS_OK;
}

/* CUDA target: the grid is evaluated here from the IR. */
static TsStatus run_cuda(Launch *L, TsKernel *k, const TsRankEnv *env) {
    const IrKernel *ir = L->ir;
    int np = ir->params.n, any = 0;
    for (int p = 0; p < np; p++) any |= ir->params.v[p].buf && ir->params.v[p].buf->contiguous;
    if (!any) return run_cuda_args(L, k, env);
    if (L->on_device) {
        /* device tensors are only checked: no copies, no heap */
        TsStatus st = cuda_contract(L, NULL, NULL);
        return st ? st : run_cuda_args(L, k, env);
    }
    char **copy = calloc((size_t)np, sizeof *copy);
    int64_t *cstrides = calloc((size_t)np * 64, sizeof *cstrides);
    void **data = calloc((size_t)np, sizeof *data);
    const int64_t **strides = calloc((size_t)np, sizeof *strides);
    TsStatus st = copy && cstrides && data && strides ? cuda_contract(L, copy, cstrides)
                                                      : fail(L, TS_ERR_NOMEM, "%s: out of memory", L->kname);
    int any_copy = 0;
    for (int p = 0; !st && p < np; p++) any_copy |= copy[p] != NULL;
    if (!st && any_copy) {
        /* the kernel sees the compact copies; the strided originals get
         * the results back */
        memcpy(data, L->data, (size_t)np * sizeof *data);
        memcpy(strides, L->strides, (size_t)np * sizeof *strides);
        for (int p = 0; p < np; p++)
            if (copy[p]) {
                L->data[p] = copy[p];
                L->strides[p] = cstrides + 64 * p;
            }
        st = run_cuda_args(L, k, env);
        for (int p = 0; p < np; p++)
            if (copy[p]) {
                L->data[p] = data[p];
                L->strides[p] = strides[p];
                if (!st) {
                    const IrBuffer *b = ir->params.v[p].buf;
                    move_compact(L, p, b->ndim, (ts_dtype_bits(b->dt) + 7) / 8, copy[p], 0);
                }
            }
    } else if (!st) {
        st = run_cuda_args(L, k, env);
    }
    for (int p = 0; copy && p < np; p++) free(copy[p]);
    free(copy);
    free(cstrides);
    free(data);
    free(strides);
    return st;
}

static TsStatus run_cuda_args(Launch *L, TsKernel *k, const TsRankEnv *env) {
    const IrKernel *ir = L->ir;
    TsLaunchArgs a;
    memset(&a, 0, sizeof a);
    a.rank = env ? env->rank : 0;
    a.nranks = env ? env->nranks : 1;
    a.nparams = ir->params.n;
    a.data = L->data;
    a.shape = L->shape;
    a.strides = L->strides;
    a.shape_vars = L->vars;
    a.nshape_vars = ir->shape_vars.n;
    for (int i = 0; i < 3; i++) {
        a.grid[i] = 1;
        if (i < ir->ngrid && ir->grid[i] && !eval(L, ir->grid[i], &a.grid[i]))
            return fail(L, TS_ERR_UNSUPPORTED, "%s: grid extent %d cannot be evaluated on the host",
                        L->kname, i);
    }
    /* a grid beyond CUDA's limits (compiling it was only a warning, api.c
     * check_cuda_limits): refused here, at the extent, before any device
     * is touched; an empty grid runs nothing (ts_cuda_run) */
    static const int64_t grid_max[3] = {2147483647LL, 65535, 65535};
    bool empty = a.grid[0] <= 0 || a.grid[1] <= 0 || a.grid[2] <= 0;
    for (int i = 0; i < 3 && !empty; i++)
        if (a.grid[i] > grid_max[i]) {
            TsLoc at = i < ir->ngrid && ir->grid[i] ? ir->grid[i]->loc : (TsLoc){0};
            if (!at.src && ir->body) at = ir->body->loc; /* (a -D value has no place of its own) */
            ts_diag_add(L->d, at, "error",
                        "kernel '%s': a grid of %lld blocks in %c is more than CUDA allows (%lld): it cannot be "
                        "launched", L->kname, (long long)a.grid[i], "xyz"[i], (long long)grid_max[i]);
            return L->d->status = TS_ERR_SHAPE;
        }
    if (L->plan) return ts_cuda_plan_device(L->d, k->cumod, ir, &a, L->plan);
    /* a local world's rank on another GPU runs the module loaded there */
    TsModuleCuda *m = env && env->cumod ? env->cumod : k->cumod;
    TsStatus st = L->on_device ? ts_cuda_run_device(L->d, m, ir, &a, L->stream)
                               : ts_cuda_run(L->d, k->cumod, ir, &a, k->opt.timing ? &k->timing : NULL);
    fflush(stdout); /* device printf output before anything the caller prints */
    return st;
}

int ts_launch_user_params(const IrKernel *ir) {
    int n = 0;
    while (n < ir->params.n && !(ir->params.v[n].buf && ir->params.v[n].buf->workspace)) n++;
    return n;
}

TsStatus ts_workspaces_alloc(TsKernel *k, const TsTensor *args, int nargs, TsDiag *d, int device, TsWorkspaces *w) {
    memset(w, 0, sizeof *w);
    w->args = args;
    w->nargs = nargs;
    w->k = k;
    w->device = device;
    const IrKernel *ir = k ? k->ir : NULL;
    int nu = ir ? ts_launch_user_params(ir) : 0, np = ir ? ir->params.n : 0;
    if (!ir || nu == np || (nu && !args && nargs == nu)) return TS_OK; /* (the launch reports a NULL array) */
    if (nargs != nu) {
        ts_diag_add(d, (TsLoc){0}, "error", "%s expects %d argument%s, got %d (its %d T.alloc_global workspace%s "
                    "the launch's own)", ir->name ? ir->name : "kernel", nu, nu == 1 ? "" : "s", nargs, np - nu,
                    np - nu == 1 ? " is" : "s are");
        return d->status = TS_ERR_ARGCOUNT;
    }
    w->n = np - nu;
    w->own = calloc((size_t)np, sizeof *w->own);
    w->shapes = calloc((size_t)w->n * 8, sizeof *w->shapes);
    w->mem = calloc((size_t)w->n, sizeof *w->mem);
    if (!w->own || !w->shapes || !w->mem) {
        ts_workspaces_free(w);
        ts_diag_add(d, (TsLoc){0}, "error", "%s: out of memory", ir->name ? ir->name : "kernel");
        return d->status = TS_ERR_NOMEM;
    }
    if (nu) memcpy(w->own, args, (size_t)nu * sizeof *args);
    for (int i = 0; i < w->n; i++) {
        const IrBuffer *b = ir->params.v[nu + i].buf;
        int64_t *sh = w->shapes + 8 * i, numel = 1;
        for (int dd = 0; dd < b->ndim && dd < 8; dd++) {
            ir_is_const_int(b->shape[dd], &sh[dd]);
            numel *= sh[dd];
        }
        size_t bytes = (size_t)numel * (size_t)((ts_dtype_bits(b->dt) + 7) / 8);
        TsStatus st = TS_OK;
        if (device) {
            uint64_t p = 0;
            st = k->cumod ? ts_cuda_workspace_alloc(d, k->cumod, bytes, &p) : TS_ERR_INVALID;
            w->mem[i] = (void *)(uintptr_t)p;
        } else if (!(w->mem[i] = malloc(bytes ? bytes : 1))) {
            ts_diag_add(d, (TsLoc){0}, "error", "%s: out of memory for the %zu-byte T.alloc_global workspace '%s'",
                        ir->name ? ir->name : "kernel", bytes, ir->params.v[nu + i].name);
            st = d->status = TS_ERR_NOMEM;
        }
        if (st) {
            ts_workspaces_free(w);
            return st;
        }
        w->own[nu + i] = (TsTensor){w->mem[i], b->dt, b->ndim, sh, NULL};
    }
    w->args = w->own;
    w->nargs = np;
    return TS_OK;
}

void ts_workspaces_free(TsWorkspaces *w) {
    for (int i = 0; w->mem && i < w->n; i++) {
        if (!w->mem[i]) continue;
        if (w->device) ts_cuda_workspace_free(w->k->cumod, (uint64_t)(uintptr_t)w->mem[i]);
        else free(w->mem[i]);
    }
    free(w->own);
    free(w->shapes);
    free(w->mem);
    w->own = NULL;
    w->shapes = NULL;
    w->mem = NULL;
    w->n = 0;
}

static TsStatus run(Launch *L, TsKernel *k, int nargs, const TsRankEnv *env) {
    const IrKernel *ir = L->ir;
    int np = ir->params.n, nv = ir->shape_vars.n, nu = ts_launch_user_params(ir);
    if (nargs != np && nargs == nu)
        return fail(L, TS_ERR_UNSUPPORTED,
                    "%s: its T.alloc_global workspaces are allocated by ts_kernel_launch and ts_kernel_launch_device, "
                    "not by this launch path (a prepared or distributed launch)", L->kname);
    if (nargs != np)
        return fail(L, TS_ERR_ARGCOUNT, "%s expects %d argument%s, got %d", L->kname, nu, nu == 1 ? "" : "s", nargs);
    if (np && !L->args) return fail(L, TS_ERR_INVALID, "%s: NULL argument array", L->kname);

    int total_dims = 0;
    for (int p = 0; p < np; p++)
        if (ir->params.v[p].buf && L->args[p].ndim > 0 && L->args[p].ndim <= 64)
            total_dims += L->args[p].ndim;
    size_t n1 = (size_t)(np ? np : 1), n2 = (size_t)(nv ? nv : 1);
    /* All per-launch arrays in one zeroed block: the stack buffer when they
     * fit (every small kernel: no heap traffic on the launch path, which
     * Python calls per tensor operation), else the heap. */
    size_t sizes[9] = {n1 * sizeof *L->data, n1 * sizeof *L->shape, n1 * sizeof *L->strides,
                       n1 * sizeof *L->slots, (size_t)(total_dims ? total_dims : 1) * sizeof *L->stride_store,
                       n2 * sizeof *L->vars, n2 * sizeof *L->bound_p, n2 * sizeof *L->bound_d,
                       n2 * sizeof *L->bound_stride};
    size_t total = 0;
    for (int i = 0; i < 9; i++) total += (sizes[i] + 15) / 16 * 16;
    unsigned char *blk = total <= sizeof L->small ? L->small : (L->heap = malloc(total));
    if (!blk) return fail(L, TS_ERR_NOMEM, "%s: out of memory", L->kname);
    memset(blk, 0, total);
    void *parts[9];
    for (int i = 0; i < 9; i++) {
        parts[i] = blk;
        blk += (sizes[i] + 15) / 16 * 16;
    }
    L->data = parts[0];
    L->shape = parts[1];
    L->strides = parts[2];
    L->slots = parts[3];
    L->stride_store = parts[4];
    L->vars = parts[5];
    L->bound_p = parts[6];
    L->bound_d = parts[7];
    L->bound_stride = parts[8];
    for (int j = 0; j < nv; j++) L->bound_p[j] = -1;

    /* Scalars first (extents may be expressions of them), then tensors. */
    TsStatus st;
    for (int p = 0; p < np; p++) {
        if (ir->params.v[p].buf) continue;
        if (!ir->params.v[p].var)
            return fail(L, TS_ERR_INTERNAL, "%s: parameter %d is neither tensor nor scalar", L->kname, p);
        if ((st = scalar(L, p))) return st;
        L->data[p] = &L->slots[p];
    }
    int64_t *stride_next = L->stride_store;
    for (int p = 0; p < np; p++)
        if (ir->params.v[p].buf && (st = tensor(L, p, &stride_next))) return st;
    for (int j = 0; j < nv; j++)
        if (L->bound_p[j] < 0)
            return fail(L, TS_ERR_SHAPE, "%s: shape variable %s is not the extent of any tensor argument",
                        L->kname, ir->shape_vars.v[j]->name);
    for (int p = 0; p < np; p++) {
        const IrBuffer *b = ir->params.v[p].buf;
        if (!b) continue;
        for (int i = 0; i < b->ndim; i++) {
            if (b->shape && (st = check_dim(L, b->shape[i], L->args[p].shape[i], p, i, 0))) return st;
            if (b->strides && (st = check_dim(L, b->strides[i], L->strides[p][i], p, i, 1))) return st;
        }
    }

    return k->target == TS_TARGET_CUDA ? run_cuda(L, k, env) : run_c(L, k, env);
}

static TsStatus launch(TsKernel *k, const TsTensor *args, int nargs, TsDiag *d, const TsRankEnv *env,
                       int on_device, void *stream, struct TsPlan **plan) {
    if (!k || !k->ctx || !d) return TS_ERR_INVALID;
    Launch L;
    memset(&L, 0, offsetof(Launch, small)); /* not the 2 KB scratch: run() zeroes what it uses */
    L.on_device = on_device;
    L.stream = stream;
    L.plan = plan;
    L.d = d;
    L.ir = k->ir;
    L.args = args;
    L.kname = k->ir && k->ir->name ? k->ir->name : "kernel";
    if (k->tier) (void)ts_kernel_tier_install(k, 0, NULL); /* a tiered build's full tier, once it is done */
    if (!k->ir || (k->target == TS_TARGET_CUDA ? !k->cumod : !k->cmod))
        return fail(&L, TS_ERR_INVALID, "%s: the kernel has no loaded module", L.kname);
    TsStatus st = run(&L, k, nargs, env);
    free(L.heap);
    return st;
}

TsStatus ts_launch(TsKernel *k, const TsTensor *args, int nargs) {
    if (!k || !k->ctx) return TS_ERR_INVALID;
    return launch(k, args, nargs, &k->ctx->diag, NULL, 0, NULL, NULL);
}

TsStatus ts_launch_device(TsKernel *k, const TsTensor *args, int nargs, void *stream) {
    if (!k || !k->ctx) return TS_ERR_INVALID;
    return launch(k, args, nargs, &k->ctx->diag, NULL, 1, stream, NULL);
}

TsStatus ts_launch_prepare(TsKernel *k, const TsTensor *args, int nargs, struct TsPlan **plan) {
    if (!k || !k->ctx || !plan) return TS_ERR_INVALID;
    *plan = NULL;
    if (k->target != TS_TARGET_CUDA) return TS_ERR_INVALID;
    return launch(k, args, nargs, &k->ctx->diag, NULL, 1, NULL, plan);
}

TsStatus ts_launch_env(TsKernel *k, const TsTensor *args, int nargs, TsDiag *d, const TsRankEnv *env) {
    /* CUDA ranks (the local world) run on device-resident heaps, queued on their stream */
    int dev = k && k->target == TS_TARGET_CUDA && env;
    return launch(k, args, nargs, d, env, dev, dev ? env->stream : NULL, NULL);
}
