/*
 * builtins.c — the names the elaborator knows without being told: the
 * TileLang namespace (`T.Kernel`, `T.copy`, `T.Parallel`, dtypes...), the
 * few Python builtins kernel factories use (range, len, min, max...), and
 * the `math` module.
 *
 * Every builtin is one row of the BUILTINS table (its namespace, its name
 * and its id); builtin_call dispatches on the id.  A name used as `T.foo`
 * that is not in the table is an error naming it, so a kernel that uses a
 * TileLang function we do not support fails with file:line:col.
 */
#include "ir/arith.h"
#include "op/op_util.h"
#include "elab/elab_int.h"
#include "ir/layout.h"
#include "ir/walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Namespaces a builtin lives in. */
enum { NS_T = 1, NS_PY = 2, NS_MATH = 4, NS_TL = 8, NS_LAYOUT = 16,
       NS_HOST = 32 /* host queries a factory makes, by their full dotted name (host_call) */,
       NS_TIR = 64 /* TVM's expression builders (`from tvm import tirx`: tirx.const, ...) */ };

/* X(id, namespace, name) */
#define BUILTINS(X)                                                                    \
    X(B_KERNEL, NS_T, "Kernel") X(B_CLUSTER_KERNEL, NS_T, "ClusterKernel")                     \
    X(B_CLUSTER_RANK, NS_T, "block_rank_in_cluster") X(B_ASSUME, NS_T, "assume") X(B_TENSOR, NS_T, "Tensor") X(B_TENSOR2, NS_T, "Buffer")  \
    X(B_ALLOC_SHARED, NS_T, "alloc_shared") X(B_ALLOC_FRAGMENT, NS_T, "alloc_fragment") \
    X(B_ALLOC_LOCAL, NS_T, "alloc_local") X(B_ALLOC_VAR, NS_T, "alloc_var")           \
    X(B_COPY, NS_T, "copy") X(B_GEMM, NS_T, "gemm") X(B_GEMM2, NS_T, "gemm_v2")        \
    X(B_FILL, NS_T, "fill") X(B_CLEAR, NS_T, "clear")                                  \
    X(B_REDUCE_MAX, NS_T, "reduce_max") X(B_REDUCE_MIN, NS_T, "reduce_min")            \
    X(B_REDUCE_SUM, NS_T, "reduce_sum") X(B_REDUCE_ABSSUM, NS_T, "reduce_abssum")      \
    X(B_REDUCE_ABSMAX, NS_T, "reduce_absmax") X(B_CUMSUM, NS_T, "cumsum")              \
    X(B_ATOMIC_ADD, NS_T, "atomic_add")                                                \
    X(B_PARALLEL, NS_T, "Parallel") X(B_PIPELINED, NS_T, "Pipelined")                  \
    X(B_SERIAL, NS_T, "serial") X(B_SERIAL2, NS_T, "Serial") X(B_UNROLL, NS_T, "unroll") \
    X(B_VECTORIZED, NS_T, "vectorized") X(B_CEILDIV, NS_T, "ceildiv")                  \
    X(B_TMAX, NS_T, "max") X(B_TMIN, NS_T, "min") X(B_IF_THEN_ELSE, NS_T, "if_then_else") \
    X(B_CAST, NS_T, "cast") X(B_CAST2, NS_T, "Cast") X(B_INFINITY, NS_T, "infinity")   \
    X(B_MAX_VALUE, NS_T, "max_value") X(B_MIN_VALUE, NS_T, "min_value")                \
    X(B_PRINT, NS_T, "print") X(B_USE_SWIZZLE, NS_T, "use_swizzle")                    \
    X(B_ANNOTATE_LAYOUT, NS_T, "annotate_layout") X(B_DYNAMIC, NS_T, "dynamic")        \
    X(B_SYMBOLIC, NS_T, "symbolic") X(B_LAYOUT, NS_T, "Layout") X(B_CONST, NS_T, "const") X(B_EMPTY, NS_T, "empty") X(B_CLAMP, NS_T, "clamp") X(B_FRAGMENT, NS_T, "Fragment") X(B_FLOORDIV, NS_T, "floordiv")                    \
    X(B_FLOORMOD, NS_T, "floormod") X(B_TRUNCDIV, NS_T, "truncdiv")                    \
    X(B_TRUNCMOD, NS_T, "truncmod")                                                    \
    X(B_NOOP_HINT, NS_T, "no_set_max_nreg") X(B_SET_MAX_NREG, NS_T, "set_max_nreg")    \
    X(B_INC_MAX_NREG, NS_T, "inc_max_nreg") X(B_DEC_MAX_NREG, NS_T, "dec_max_nreg")    \
    X(B_PRODUCER_REG, NS_T, "annotate_producer_reg_dealloc")                           \
    X(B_CONSUMER_REG, NS_T, "annotate_consumer_reg_alloc")                             \
    X(B_NOOP_HINT3, NS_T, "disable_warp_group_reg_alloc")                              \
    X(B_NOOP_HINT4, NS_T, "annotate_l2_hit_ratio") \
    X(B_ASYNC_COMMIT, NS_T, "ptx_commit_group") X(B_ASYNC_WAIT, NS_T, "ptx_wait_group") \
    X(B_ACCESS_PTR, NS_T, "access_ptr") X(B_PTX_CP_ASYNC, NS_T, "ptx_cp_async")        \
    X(B_FENCE_PROXY_ASYNC, NS_T, "fence_proxy_async")                                  \
    X(B_WGMMA_GEMM, NS_T, "wgmma_gemm") X(B_WAIT_WGMMA, NS_T, "wait_wgmma")            \
    X(B_ALLOC_TMEM, NS_T, "alloc_tmem") X(B_TCGEN05_GEMM, NS_T, "tcgen05_gemm")       \
    X(B_GEMM_BLOCKSCALED, NS_T, "mma_gemm_blockscaled")                                \
    X(B_PRIM_FUNC, NS_T, "prim_func") X(B_MACRO, NS_T, "macro")                        \
    X(B_GET_THREAD_BINDING, NS_T, "get_thread_binding")                                \
    X(B_GET_BLOCK_BINDING, NS_T, "get_block_binding") X(B_DP4A, NS_T, "dp4a")          \
    X(B_SHIFT_LEFT, NS_T, "shift_left") X(B_SHIFT_RIGHT, NS_T, "shift_right")          \
    X(B_THREAD_BINDING, NS_T, "thread_binding") X(B_PARALLEL_TIR, NS_T, "parallel")    \
    X(B_RANGE, NS_PY, "range") X(B_LEN, NS_PY, "len") X(B_PYMIN, NS_PY, "min")          \
    X(B_PYMAX, NS_PY, "max") X(B_PYABS, NS_PY, "abs") X(B_INT, NS_PY, "int")            \
    X(B_FLOAT, NS_PY, "float") X(B_BOOL, NS_PY, "bool") X(B_TUPLE, NS_PY, "tuple")      \
    X(B_LIST, NS_PY, "list") X(B_PYPRINT, NS_PY, "print") X(B_PYPOW, NS_PY, "pow")      \
    X(B_PYROUND, NS_PY, "round") X(B_SUM, NS_PY, "sum") X(B_ENUMERATE, NS_PY, "enumerate") \
    X(B_ZIP, NS_PY, "zip") X(B_STR, NS_PY, "str")                                       \
    X(B_MSQRT, NS_MATH, "sqrt") X(B_MLOG, NS_MATH, "log") X(B_MLOG2, NS_MATH, "log2")   \
    X(B_MEXP, NS_MATH, "exp") X(B_MCEIL, NS_MATH, "ceil") X(B_MFLOOR, NS_MATH, "floor") \
    X(B_MPOW, NS_MATH, "pow") X(B_MLOG10, NS_MATH, "log10") X(B_MISQRT, NS_MATH, "isqrt") \
    X(B_JIT, NS_TL, "jit") X(B_TLCDIV, NS_TL, "cdiv")                           \
    X(B_NEXT_POW2, NS_TL, "next_power_of_2") X(B_MGCD, NS_MATH, "gcd")                 \
    X(B_CUDA_CAPABILITY, NS_HOST, "torch.cuda.get_device_capability")                  \
    X(B_CUDA_AVAILABLE, NS_HOST, "torch.cuda.is_available")                            \
    X(B_CUDA_NAME, NS_HOST, "torch.cuda.get_device_name")                              \
    X(B_CUDA_COUNT, NS_HOST, "torch.cuda.device_count")                                \
    X(B_CUDA_PROPS, NS_HOST, "torch.cuda.get_device_properties")                       \
    X(B_CUDA_CURRENT, NS_HOST, "torch.cuda.current_device")                            \
    X(B_HOST_NOOP, NS_HOST, "torch.cuda.synchronize") X(B_HOST_NOOP2, NS_HOST, "torch.cuda.set_device") \
    X(B_HOST_NOOP3, NS_HOST, "torch.cuda.manual_seed_all") X(B_HOST_NOOP4, NS_HOST, "torch.cuda.empty_cache") \
    X(B_HOST_NOOP5, NS_HOST, "torch.manual_seed") X(B_HOST_NOOP6, NS_HOST, "torch.cuda.manual_seed") \
    X(B_NUM_SMS, NS_HOST, "tilelang.carver.arch.driver.get_num_sms")                   \
    X(B_FP8_TYPE, NS_HOST, "tilelang.language.fp8.determine_fp8_type")                 \
    X(B_IKET_RANGE, NS_HOST, "tilelang.tools.cuda.iket.range")                         \
    X(B_IKET_MARK, NS_HOST, "tilelang.tools.cuda.iket.mark")                           \
    X(B_IKET_PAYLOAD, NS_HOST, "tilelang.tools.cuda.iket.payload")                     \
    X(B_TVM_DTYPE, NS_HOST, "tvm.DataType") X(B_TVM_DTYPE2, NS_HOST, "tilelang.tvm.DataType") \
    X(B_TVM_DTYPE3, NS_HOST, "tilelang.DataType")                                      \
    X(B_METHOD, 0, "method") X(B_ISINSTANCE, NS_PY, "isinstance")                      \
    X(B_TL_DTYPE, NS_TL, "DataType") X(B_PERSISTENT, NS_T, "Persistent")               \
    X(B_ATOMIC_ADDX2, NS_T, "atomic_addx2") X(B_ATOMIC_ADDX4, NS_T, "atomic_addx4")     \
    X(B_SYNC_THREADS, NS_T, "sync_threads")                                            \
    X(B_THREAD_RETURN, NS_T, "thread_return")                                          \
    X(B_RESHAPE, NS_T, "reshape") X(B_VIEW, NS_T, "view")                             \
    X(B_ALLOC_REDUCER, NS_T, "alloc_reducer") X(B_REDUCER_INIT, NS_T, "reducer_init")   \
    X(B_REDUCER_UPDATE, NS_T, "reducer_update") X(B_FINALIZE_REDUCER, NS_T, "finalize_reducer") \
    X(B_RNG_INIT, NS_T, "rng_init") X(B_RNG_RAND, NS_T, "rng_rand") X(B_RNG_RAND_FLOAT, NS_T, "rng_rand_float") \
    X(B_IM2COL, NS_T, "im2col") X(B_IM2COL2, NS_T, "c2d_im2col")                      \
    X(B_GEMM_SP, NS_T, "gemm_sp") X(B_DEVICE_ASSERT, NS_T, "device_assert")           \
    X(B_E_FACTOR, NS_HOST, "tilelang.cuda.intrinsics.sparse_layout.get_e_factor")      \
    X(B_E_REPLICATE, NS_HOST, "tilelang.cuda.intrinsics.sparse_layout.get_e_replicate_factor") \
    X(B_REINTERPRET, NS_T, "reinterpret") X(B_TIR_REINTERPRET, NS_TIR, "reinterpret")  \
    X(B_TIR_CONST, NS_TIR, "const") X(B_TIR_CAST, NS_TIR, "Cast")                      \
    X(B_TIR_SELECT, NS_TIR, "Select")                                                  \
    X(B_ATTR, NS_T, "attr") X(B_COMM_REDUCER, NS_T, "comm_reducer")                    \
    X(B_THREAD_ALLREDUCE, NS_T, "tvm_thread_allreduce") X(B_EVALUATE, NS_T, "evaluate")    \
    X(B_ALLOC_GLOBAL, NS_T, "alloc_global") X(B_MAKE_TENSOR, NS_T, "make_tensor") X(B_TDTYPE, NS_T, "dtype")

enum {
    B_NONE_,
#define X(id, ns, name) id,
    BUILTINS(X)
#undef X
    B_INTRINSIC_BASE = 1000 /* T.<intrinsic>: B_INTRINSIC_BASE + IrIntrinsic */
};

static const struct { int id, ns; const char *name; } builtin_table[] = {
#define X(id, ns, name) {id, ns, name},
    BUILTINS(X)
#undef X
};

static const char *intrinsic_names[] = {
#define X(e, n, a) n,
    IR_INTRINSICS(X)
#undef X
};
static const int intrinsic_arity[] = {
#define X(e, n, a) a,
    IR_INTRINSICS(X)
#undef X
};

static Value *builtin_value(Elab *E, int id, TsLoc loc) {
    Value *v = val_new(E, V_BUILTIN, loc);
    v->bi = id;
    return v;
}

static Value *lookup_ns(Elab *E, int ns, const char *name, TsLoc loc) {
    for (int i = 0; i < TS_COUNTOF(builtin_table); i++)
        if ((builtin_table[i].ns & ns) && !strcmp(builtin_table[i].name, name))
            return builtin_value(E, builtin_table[i].id, loc);
    return NULL;
}

static const char *builtin_name(int id) {
    if (id >= B_INTRINSIC_BASE) return intrinsic_names[id - B_INTRINSIC_BASE];
    for (int i = 0; i < TS_COUNTOF(builtin_table); i++)
        if (builtin_table[i].id == id) return builtin_table[i].name;
    return "?";
}

Value *module_value(Elab *E, const char *dotted, TsLoc loc) {
    Value *m = val_new(E, V_MODULE, loc);
    if (!strcmp(dotted, "tilelang.language") || !strcmp(dotted, "tilescale.language"))
        m->s = "T";
    else if (!strcmp(dotted, "tilescale"))
        m->s = "tilelang";
    else if (!strncmp(dotted, "tilelang.", 9) && strlen(dotted) > 15 &&
             !strcmp(dotted + strlen(dotted) - 15, ".GemmWarpPolicy")) { /* from tilelang.tileop.base import it */
        m->kind = V_ENUM;
        m->s = "GemmWarpPolicy";
    }
    else
        m->s = dotted;
    return m;
}

Value *builtin_global(Elab *E, const char *name, TsLoc loc) {
    if (!strcmp(name, "__name__")) return val_str(E, "tilescale", loc);
    return lookup_ns(E, NS_PY, name, loc);
}

/* ---- methods of values: a V_BUILTIN B_METHOD holding its object (items[0])
 * and the method's name (s); call_method runs it ---- */

static const char *const str_methods[] = {"strip", "lstrip", "rstrip", "lower", "upper", "startswith", "endswith",
                                          "replace", "split", "join", "isdigit", "isalpha", "find", "count",
                                          "capitalize", "format", NULL};

static bool is_method(const Value *obj, const char *name) {
    switch (obj->kind) {
    case V_STR:
        for (int i = 0; str_methods[i]; i++)
            if (!strcmp(str_methods[i], name)) return true;
        return false;
    case V_DTYPE: /* a dtype is its name to string methods (TileLang's dtypes are str subclasses) */
        for (int i = 0; str_methods[i]; i++)
            if (!strcmp(str_methods[i], name)) return true;
        return !strcmp(name, "astype");
    case V_INT: case V_BOOL: return !strcmp(name, "bit_length") || !strcmp(name, "astype");
    case V_FLOAT: return !strcmp(name, "is_integer") || !strcmp(name, "astype");
    case V_EXPR: case V_ACCESS: return !strcmp(name, "astype");
    case V_LIST: /* host code building a list (offsets, pointer tables) before the kernel */
        return !strcmp(name, "append") || !strcmp(name, "extend") || !strcmp(name, "pop");
    case V_ENUM: /* a T.GemmWarpPolicy value's host-side methods (tilelang/tileop/base.py) */
        return !strncmp(obj->s, "GemmWarpPolicy.", 15) &&
               (!strcmp(name, "compute_warp_partition") || !strcmp(name, "is_square") ||
                !strcmp(name, "is_full_row") || !strcmp(name, "is_full_col"));
    default: return false;
    }
}

static Value *method_value(Elab *E, Value *obj, const char *name, TsLoc loc) {
    Value *m = val_new(E, V_BUILTIN, loc);
    m->bi = B_METHOD;
    m->s = name;
    m->items = TS_NEWN(E->a, Value *, 1);
    m->items[0] = obj;
    m->n = 1;
    return m;
}

/* The SM count of an architecture's data-center part (H100/H200 132, B200 148,
 * A100 108; NVIDIA's product specifications): what tilelang.carver's
 * get_num_sms() answers for the target compiled for.  Kernels use it to size
 * persistent grids, which stay correct for any count. */
static int64_t sm_count(int sm) { return sm >= 100 ? 148 : sm >= 90 ? 132 : 108; }

/* torch.cuda.get_device_properties(i).<name>: the values of the target's
 * architecture that a factory picks its configuration by (the GPU the
 * kernel is compiled for, as get_device_capability answers); others are
 * an error naming them. */
static Value *device_props(Elab *E, const char *name, TsLoc loc) {
    int sm = E->caps ? E->caps->sm : 0;
    if (!strcmp(name, "major")) return val_int(E, sm / 10, loc);
    if (!strcmp(name, "minor")) return val_int(E, sm % 10, loc);
    if (!strcmp(name, "multi_processor_count")) return val_int(E, sm_count(sm), loc);
    if (!strcmp(name, "name")) return val_str(E, ts_sprintf(E->a, "NVIDIA GPU (%s)", E->caps->arch), loc);
    if (!strcmp(name, "warp_size")) return val_int(E, 32, loc);
    if (!strcmp(name, "max_threads_per_multi_processor")) return val_int(E, sm == 86 || sm == 89 ? 1536 : 2048, loc);
    if (!strcmp(name, "regs_per_multiprocessor")) return val_int(E, 65536, loc);
    if (!strcmp(name, "shared_memory_per_block_optin") && E->caps->smem_max)
        return val_int(E, E->caps->smem_max, loc);
    elab_fail(E, TS_ERR_UNSUPPORTED, loc,
              "torch.cuda.get_device_properties().%s is not known at compile time here (major, minor, "
              "multi_processor_count, name, warp_size, max_threads_per_multi_processor, regs_per_multiprocessor, "
              "shared_memory_per_block_optin are)", name);
}

Value *builtin_attr(Elab *E, Value *obj, const char *name, TsLoc loc) {
    switch (obj->kind) {
    case V_MODULE: {
        const char *m = obj->s;
        if (!strcmp(m, "T")) {
            Value *v = lookup_ns(E, NS_T, name, loc);
            if (v || (v = comm_builtin_lookup(E, name, loc)) || (v = bar_builtin_lookup(E, name, loc)) ||
                (v = ext_builtin_lookup(E, name, loc)) || (v = sched_builtin_lookup(E, name, loc)))
                return v;
            TsDType dt = ts_dtype_from_name(name);
            if (dt != TS_DTYPE_NONE) {
                v = val_new(E, V_DTYPE, loc);
                v->dt = dt;
                return v;
            }
            for (int i = 0; i < IR_INTRINSIC_COUNT; i++)
                if (!strcmp(intrinsic_names[i], name)) return builtin_value(E, B_INTRINSIC_BASE + i, loc);
            if (!strcmp(name, "GemmWarpPolicy")) {
                v = val_new(E, V_ENUM, loc);
                v->s = "GemmWarpPolicy";
                return v;
            }
            if (!strcmp(name, "ptr")) { /* T.Tensor([n], T.ptr): a table of addresses, int64 storage as in
                                           TileLang (its proxy.py normalizes T.ptr to int64) */
                v = val_new(E, V_DTYPE, loc);
                v->dt = TS_INT64;
                return v;
            }
            elab_fail(E, TS_ERR_NAME, loc, "unknown TileLang function or name 'T.%s'", name);
        }
        if (!strcmp(m, "math")) {
            Value *v = lookup_ns(E, NS_MATH, name, loc);
            if (v) return v;
            if (!strcmp(name, "pi")) return val_float(E, 3.14159265358979323846, loc);
            if (!strcmp(name, "e")) return val_float(E, 2.71828182845904523536, loc);
            if (!strcmp(name, "inf")) return val_float(E, INFINITY, loc);
            elab_fail(E, TS_ERR_NAME, loc, "math.%s is not supported", name);
        }
        if (!strcmp(m, "tilelang")) {
            if (!strcmp(name, "language")) return module_value(E, "tilelang.language", loc);
            Value *v = lookup_ns(E, NS_TL, name, loc);
            if (v) return v;
        }
        if (!strcmp(m, "tilelang.math") || !strcmp(m, "tilelang.utils.math")) {
            Value *v = lookup_ns(E, NS_TL, name, loc);
            if (v) return v;
        }
        if (!strcmp(m, "tilelang") && (!strcmp(name, "math") || !strcmp(name, "utils")))
            return module_value(E, ts_sprintf(E->a, "tilelang.%s", name), loc);
        if (!strncmp(m, "tilelang.layout", 15) || !strcmp(name, "layout"))
            return module_value(E, ts_sprintf(E->a, "%s.%s", m, name), loc);
        if (!strcmp(m, "torch.cuda.device_properties")) return device_props(E, name, loc);
        /* torch and TileLang's hardware queries (tilelang.carver): dotted names
         * down to the function; host_call answers the ones it knows by their full
         * name and refuses the rest, naming them.  torch's dtypes are dtypes. */
        if (!strcmp(m, "torch") || !strncmp(m, "torch.", 6) || !strncmp(m, "tilelang.carver", 15) ||
            !strcmp(m, "tilelang.language.fp8") ||
            !strcmp(m, "tvm") || !strcmp(m, "tilelang.tvm") || !strcmp(m, "tilelang.tools.cuda.iket") ||
            (!strcmp(m, "tilelang") && (!strcmp(name, "carver") || !strcmp(name, "tvm")))) {
            TsDType dt = !strcmp(m, "torch") ? ts_dtype_from_name(name) : TS_DTYPE_NONE;
            if (dt != TS_DTYPE_NONE) {
                Value *v = val_new(E, V_DTYPE, loc);
                v->dt = dt;
                return v;
            }
            return module_value(E, ts_sprintf(E->a, "%s.%s", m, name), loc);
        }
        if (!strcmp(m, "tvm.tir") || !strcmp(m, "tvm.tirx") || !strcmp(m, "tilelang.tvm.tir") ||
            !strcmp(m, "tilelang.tvm.tirx")) {
            Value *v = lookup_ns(E, NS_TIR, name, loc);
            if (v) return v;
        }
        Value *v = val_new(E, V_OPAQUE, loc);
        v->s = ts_sprintf(E->a, "'%s.%s' is outside what this compiler understands", m, name);
        return v;
    }
    case V_ENUM:
        if (is_method(obj, name)) return method_value(E, obj, name, loc);
        if (!strcmp(obj->s, "GemmWarpPolicy")) {
            if (strcmp(name, "Square") && strcmp(name, "FullRow") && strcmp(name, "FullCol"))
                elab_fail(E, TS_ERR_NAME, loc, "unknown T.GemmWarpPolicy.%s (Square, FullRow or FullCol)", name);
            Value *v = val_new(E, V_ENUM, loc);
            v->s = ts_sprintf(E->a, "GemmWarpPolicy.%s", name);
            return v;
        }
        return comm_enum_attr(E, obj, name, loc);
    case V_BUFFER:
    case V_REGION: {
        IrBuffer *b = obj->kind == V_BUFFER ? obj->buf : obj->reg.buf;
        if (!strcmp(name, "dtype")) {
            Value *v = val_new(E, V_DTYPE, loc);
            v->dt = b->dt;
            return v;
        }
        if (!strcmp(name, "shape")) {
            Value **items = TS_NEWN(E->a, Value *, b->ndim ? b->ndim : 1);
            for (int i = 0; i < b->ndim; i++)
                items[i] = val_expr(E, obj->kind == V_BUFFER ? b->shape[i] : obj->reg.extent[i], loc);
            return val_seq(E, V_TUPLE, items, b->ndim, loc);
        }
        if (!strcmp(name, "ndim")) return val_int(E, b->ndim, loc);
        if (!strcmp(name, "name")) return val_str(E, b->name, loc);
        if (!strcmp(name, "data") && obj->kind == V_BUFFER) { /* its storage: T.Tensor(shape, dtype, buf.data) */
            Value *v = val_new(E, V_BUFFER, loc);
            v->buf = b;
            v->s = "data";
            return v;
        }
        return NULL;
    }
    case V_SCHED: return sched_attr(E, obj, name, loc);
    case V_DTYPE:
        if (!strcmp(name, "bits")) return val_int(E, ts_dtype_bits(obj->dt), loc);
        if (!strcmp(name, "itemsize")) return val_int(E, (ts_dtype_bits(obj->dt) + 7) / 8, loc); /* torch.dtype's */
        if (!strcmp(name, "lanes")) return val_int(E, 1, loc);
        if (is_method(obj, name)) return method_value(E, obj, name, loc);
        return NULL;
    case V_STR: {
        /* a dtype's name (-D dtype=float16, a string in the source): TileLang's
         * dtypes are str subclasses, so `dtype.bits` of one is its width */
        TsDType sdt = ts_dtype_from_name(obj->s);
        if (sdt != TS_DTYPE_NONE && (!strcmp(name, "bits") || !strcmp(name, "itemsize") || !strcmp(name, "lanes"))) {
            Value *d = val_new(E, V_DTYPE, loc);
            d->dt = sdt;
            return builtin_attr(E, d, name, loc);
        }
        return is_method(obj, name) ? method_value(E, obj, name, loc) : NULL;
    }
    case V_INT:
    case V_BOOL:
    case V_FLOAT:
    case V_LIST:
        return is_method(obj, name) ? method_value(E, obj, name, loc) : NULL;
    case V_EXPR:
    case V_ACCESS:
        if (is_method(obj, name)) return method_value(E, obj, name, loc);
        if (!strcmp(name, "dtype")) {
            Value *v = val_new(E, V_DTYPE, loc);
            v->dt = val_to_expr(E, obj, loc)->dt;
            return v;
        }
        return NULL;
    default: return NULL;
    }
}

/* ---- argument access ------------------------------------------------------------------ */

typedef struct Args {
    Value **v;
    int n;
    const char **kw;
    Value **kwv;
    int nkw;
    bool *used;
    TsLoc loc;
    const char *fn;
} Args;

/* Argument `pos` (or keyword `name`); NULL if absent. */
static Value *arg(Elab *E, Args *A, int pos, const char *name) {
    Value *v = pos >= 0 && pos < A->n ? A->v[pos] : NULL;
    for (int i = 0; i < A->nkw; i++)
        if (name && !strcmp(A->kw[i], name)) {
            if (v) elab_fail(E, TS_ERR_TYPE, A->loc, "%s got two values for '%s'", A->fn, name);
            v = A->kwv[i];
            A->used[i] = true;
        }
    return v;
}

static Value *req(Elab *E, Args *A, int pos, const char *name) {
    Value *v = arg(E, A, pos, name);
    if (!v) elab_fail(E, TS_ERR_TYPE, A->loc, "%s needs an argument '%s'", A->fn, name);
    return v;
}

/* Keyword arguments a call may pass that we accept and ignore (GPU hints). */
static void ignore_kw(Args *A, const char *name) {
    for (int i = 0; i < A->nkw; i++)
        if (!strcmp(A->kw[i], name)) A->used[i] = true;
}

static void check_args(Elab *E, Args *A, int maxpos) {
    if (A->n > maxpos)
        elab_fail(E, TS_ERR_TYPE, A->loc, "%s takes at most %d positional argument%s, %d given", A->fn,
                  maxpos, maxpos == 1 ? "" : "s", A->n);
    for (int i = 0; i < A->nkw; i++)
        if (!A->used[i])
            elab_fail(E, TS_ERR_TYPE, A->loc, "%s got an unexpected keyword argument '%s'", A->fn, A->kw[i]);
}

static bool flag(Elab *E, Args *A, int pos, const char *name, bool dflt) {
    Value *v = arg(E, A, pos, name);
    return v ? val_truthy(E, v, A->loc) : dflt;
}

/* ---- helpers for kernel builtins ----------------------------------------------------------- */

static void need_kernel(Elab *E, Args *A) {
    if (!E->cur)
        elab_fail(E, TS_ERR_UNSUPPORTED, A->loc, "%s must be used inside `with T.Kernel(...)`", A->fn);
}

static IrExpr *int_expr(Elab *E, Value *v, TsLoc loc, const char *what) {
    IrExpr *e = val_to_expr(E, v, loc);
    if (!ts_dtype_is_int(e->dt))
        elab_fail(E, TS_ERR_TYPE, loc, "%s must be an integer, got %s", what, ts_dtype_name(e->dt));
    return e;
}

static Value *make_buffer(Elab *E, Args *A, IrScope scope, Value *shape, TsDType dt) {
    need_kernel(E, A);
    int n;
    Value **items = val_items(E, shape, &n);
    IrExpr **ext = TS_NEWN(E->a, IrExpr *, n ? n : 1);
    int64_t bytes = (ts_dtype_bits(dt) + 7) / 8;
    for (int i = 0; i < n; i++) {
        int64_t c = val_to_int(E, items[i], A->loc, "a buffer extent");
        if (c <= 0) elab_fail(E, TS_ERR_TYPE, A->loc, "%s: extent %lld must be positive", A->fn, (long long)c);
        /* an on-chip buffer of over 2^40 bytes fits no target; refused here,
         * the passes' size arithmetic (stages, padding, slots) cannot
         * overflow (the fuzzer found four places that did on extents near
         * 2^63) */
        if (__builtin_mul_overflow(bytes, c, &bytes) || bytes > ((int64_t)1 << 40))
            elab_fail(E, TS_ERR_TYPE, A->loc, "%s: a buffer with extent %lld in dimension %d is too large (over 2^40 bytes)",
                      A->fn, (long long)c, i);
        ext[i] = c <= INT32_MAX ? ir_i32(E->a, c) : ir_int(E->a, c, TS_INT64); /* never truncated */
    }
    bool int4 = dt == TS_INT4, fp4 = dt == TS_FLOAT4_E2M1;
    bool packed = (int4 || fp4) && (scope == IR_SCOPE_SHARED || scope == IR_SCOPE_GLOBAL);
    if (int4 && !packed)
        elab_fail(E, TS_ERR_UNSUPPORTED, A->loc,
                  "%s: int4 %s buffers are not supported (int4 is packed two to a byte in shared and global "
                  "memory only; hold the values in an int8 buffer)", A->fn, ir_scope_name(scope));
    /* float4_e2m1fn in registers (fragments, locals): one code to a uint8
     * (its low nibble), named through a float4_e2m1fn view as the packed
     * storage is: a thread never shares a register byte */
    TsDType sdt = packed ? TS_INT8 : fp4 ? TS_UINT8 : dt;
    IrBuffer *b = ir_buffer(E->k, "", sdt, scope, n, packed ? elab_int4_packed_shape(E, ext, n, A->loc, A->fn) : ext,
                            A->loc);
    IrStmt *s = ir_stmt(E->a, IR_S_ALLOC, A->loc);
    s->alloc.buf = b;
    emit(E, s);
    Value *v = val_new(E, V_BUFFER, A->loc);
    v->buf = packed || fp4 ? elab_int4_view(E, b, dt, ext, n, A->loc) : b;
    return v;
}

/*
 * T.int4 (gemm_int4's matmul_nt_int4).  An int4 buffer is stored as int8
 * bytes holding two elements each, the low nibble first (TileLang's
 * pack_int4 and the dequantize examples' unpacking agree on that order),
 * so a tensor (M, K) of int4 is the int8 tensor (M, K / 2) that TileLang's
 * callers pass.  The name the program uses is an int4 view of those bytes
 * (IrBuffer.base, as T.view(dtype=) makes): tile operators are lowered over
 * the view's shape, then resolve_views turns each element access into a
 * byte access (a load sign-extends the nibble; a store rewrites its half of
 * the byte), so no later pass, target or interpreter ever sees a 4-bit
 * element in memory, and every byte count stays a count of whole bytes.
 * A T.copy between two int4 buffers moves whole bytes (copy_int4_bytes).
 * Only shared and global int4 buffers exist: registers hold int8.
 */
IrExpr **elab_int4_packed_shape(Elab *E, IrExpr **ext, int n, TsLoc loc, const char *what) {
    int64_t c;
    bool k = n >= 1 && ir_is_const_int(ext[n - 1], &c);
    if (n < 1 || (k && c % 2))
        elab_fail(E, TS_ERR_SHAPE, loc,
                  "%s: the last extent of a 4-bit (int4, float4_e2m1fn) buffer must be an even constant (two "
                  "elements to a byte), not %s",
                  what, n < 1 ? "missing" : ts_sprintf(E->a, "%lld", (long long)c));
    IrExpr **p = TS_NEWN(E->a, IrExpr *, n);
    for (int i = 0; i < n; i++) p[i] = ext[i];
    /* a run-time extent (a tensor's T.const or T.dynamic N): ceil(N / 2) bytes */
    p[n - 1] = k ? ir_i32(E->a, c / 2)
                 : ir_bin(E->a, IR_FLOORDIV, ir_bin(E->a, IR_ADD, ext[n - 1], ir_int(E->a, 1, ext[n - 1]->dt)),
                          ir_int(E->a, 2, ext[n - 1]->dt));
    return p;
}

IrBuffer *elab_int4_view(Elab *E, IrBuffer *packed, TsDType dt, IrExpr **ext, int n, TsLoc loc) {
    IrBuffer *b = ir_buffer(E->k, packed->name, dt, packed->scope, n, ext, loc);
    b->base = packed;
    if (packed->scope == IR_SCOPE_GLOBAL) { /* row-major strides, as the lowering of tile ops reads them */
        b->strides = TS_NEWN(E->a, IrExpr *, n);
        IrExpr *st = ir_i32(E->a, 1);
        for (int i = n - 1; i >= 0; i--) {
            b->strides[i] = st;
            st = ir_bin(E->a, IR_MUL, st, ext[i]);
        }
    }
    return b;
}

/*
 * A view of src's storage with another shape (IrBuffer.base): T.reshape,
 * T.view(buf, shape=, dtype=), T.Tensor(shape, dtype, buf.data).  The view
 * must hold as many bits as its base (as TileLang asserts).  A view with
 * another dtype names the same bytes as elements of that dtype (a float32
 * scratch over a bfloat16 shared tile): resolve_views turns its accesses
 * into accesses of the base's stored bits; without a shape its last
 * extent is scaled by the ratio of the widths.
 */
static Value *make_view(Elab *E, Args *A, Value *srcv, Value *shape, Value *dtv) {
    IrBuffer *src = val_to_buffer(E, srcv, A->loc, ts_sprintf(E->a, "%s: the viewed buffer", A->fn));
    if (src->scope == IR_SCOPE_VAR)
        elab_fail(E, TS_ERR_TYPE, A->loc, "%s: '%s' is an alloc_var scalar, not a buffer", A->fn, src->name);
    IrBuffer *base = src->base ? src->base : src;
    TsDType dt = dtv ? val_to_dtype(E, dtv, A->loc) : src->dt;
    int wv = ts_dtype_bits(dt), wb = ts_dtype_bits(base->dt);
    if (dt != base->dt && (dt == TS_BOOL || base->dt == TS_BOOL))
        elab_fail(E, TS_ERR_UNSUPPORTED, A->loc, "%s: a %s view of the %s buffer '%s' is not supported", A->fn,
                  ts_dtype_name(dt), ts_dtype_name(base->dt), base->name);
    int n = src->ndim;
    Value **items = shape ? val_items(E, shape, &n) : NULL;
    if (n < 1 || n > 16) elab_fail(E, TS_ERR_TYPE, A->loc, "%s: a view has 1 to 16 dimensions, %d given", A->fn, n);
    IrExpr **ext = TS_NEWN(E->a, IrExpr *, n);
    int64_t nv = 1, nb = 1, c;
    bool known = true;
    for (int i = 0; i < n; i++) {
        ext[i] = items ? int_expr(E, items[i], A->loc, "a view extent") : src->shape[i];
        int ws = ts_dtype_bits(src->dt);
        if (!items && i == n - 1 && ws != wv) { /* no shape, another width: the last extent scaled */
            if (!ir_is_const_int(ext[i], &c) || (c * ws) % wv)
                elab_fail(E, TS_ERR_SHAPE, A->loc, "%s: a %s view of '%s' without a shape: its last extent times %d "
                          "bits is not a multiple of %d", A->fn, ts_dtype_name(dt), src->name, ws, wv);
            ext[i] = ir_i32(E->a, c * ws / wv);
        }
        if (!ir_is_const_int(ext[i], &c)) {
            if (base->scope != IR_SCOPE_GLOBAL)
                elab_fail(E, TS_ERR_TYPE, A->loc, "%s: the extents of a view of the %s buffer '%s' must be constants",
                          A->fn, ir_scope_name(base->scope), base->name);
            known = false;
        } else if (c <= 0) {
            elab_fail(E, TS_ERR_SHAPE, A->loc, "%s: extent %lld must be positive", A->fn, (long long)c);
        } else if (__builtin_mul_overflow(nv, c, &nv)) {
            elab_fail(E, TS_ERR_SHAPE, A->loc, "%s: the view has too many elements", A->fn);
        }
    }
    for (int i = 0; i < base->ndim; i++) {
        if (!ir_is_const_int(base->shape[i], &c)) known = false;
        else if (__builtin_mul_overflow(nb, c, &nb)) known = false;
    }
    if (known && dt == base->dt && nv != nb)
        elab_fail(E, TS_ERR_SHAPE, A->loc, "%s: a view of %lld elements over '%s', which has %lld", A->fn,
                  (long long)nv, base->name, (long long)nb);
    if (known && dt != base->dt && (__int128)nv * wv != (__int128)nb * wb)
        elab_fail(E, TS_ERR_SHAPE, A->loc, "%s: a view of %lld %s elements over '%s', which has %lld %s elements",
                  A->fn, (long long)nv, ts_dtype_name(dt), base->name, (long long)nb, ts_dtype_name(base->dt));
    IrBuffer *b = ir_buffer(E->k, "", dt, base->scope, n, ext, A->loc);
    b->base = base;
    if (base->scope == IR_SCOPE_GLOBAL) { /* row-major strides, as the lowering of tile ops reads them */
        b->strides = TS_NEWN(E->a, IrExpr *, n);
        IrExpr *st = ir_i32(E->a, 1);
        for (int i = n - 1; i >= 0; i--) {
            b->strides[i] = st;
            st = ir_bin(E->a, IR_MUL, st, ext[i]);
        }
    }
    Value *v = val_new(E, V_BUFFER, A->loc);
    v->buf = b;
    return v;
}

/* ---- reducers -------------------------------------------------------------------
 *
 * T.alloc_reducer(shape, dtype, op="sum") is a fragment whose elements
 * T.Parallel iterations combine into (`r[i] += v`, T.reducer_update).
 * TileLang keeps per-thread partials and combines them across threads at
 * T.finalize_reducer.  Here the combining happens where the updates are:
 * a T.Parallel nest that updates a reducer at indices not using some of
 * its loop variables has those levels turned into serial loops inside the
 * others (elab_parallel_reducers), so each element is accumulated by one
 * iteration of the remaining parallel levels, in order, and no two
 * threads ever write one element; T.finalize_reducer has nothing left to
 * combine (with dst= it copies the result there).  Without the rewrite the
 * nest would be a race (insert_sync refuses it).  The cost is parallelism:
 * the parallel extent is that of the reducer's indices.
 */

static const struct { const char *name; IrBinOp op; } reducer_ops[] = {
    {"sum", IR_ADD}, {"max", IR_MAX}, {"min", IR_MIN},
    {"bitand", IR_BITAND}, {"bitor", IR_BITOR}, {"bitxor", IR_BITXOR},
};

static int reducer_of(Elab *E, const IrBuffer *b) {
    for (int i = 0; i < E->reducers.n; i++)
        if (E->reducers.v[i].buf == b) return i;
    return -1;
}

/* The identity of a reducer's combine in its dtype. */
static IrExpr *reducer_identity(Elab *E, IrBinOp op, TsDType dt) {
    bool f = ts_dtype_is_float(dt);
    int bits = ts_dtype_bits(dt);
    bool uns = !f && ts_dtype_info(dt)->kind != 'i';
    switch (op) {
    case IR_MAX:
        if (f) return ir_float(E->a, -INFINITY, dt);
        return ir_int(E->a, uns ? 0 : bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)), dt);
    case IR_MIN:
        if (f) return ir_float(E->a, INFINITY, dt);
        return ir_int(E->a, uns ? (bits >= 64 ? -1 : (int64_t)(((uint64_t)1 << bits) - 1))
                                : bits >= 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1, dt);
    case IR_BITAND: return ir_int(E->a, -1, dt);
    default: return f ? ir_float(E->a, 0, dt) : ir_int(E->a, 0, dt);
    }
}

typedef struct RedUse {
    Elab *E;
    IrVar **vars; /* the nest's loop variables */
    bool *used;   /* used in a reducer's update index */
    int n;
    bool any;     /* some statement stores to a reducer */
} RedUse;

static bool red_var(const IrExpr *e, void *ctx) {
    RedUse *u = ctx;
    if (e->kind == IR_E_VAR)
        for (int i = 0; i < u->n; i++)
            if (e->var == u->vars[i]) u->used[i] = true;
    return false;
}

static bool red_store(const IrStmt *s, void *ctx) {
    RedUse *u = ctx;
    if ((s->kind == IR_S_STORE || s->kind == IR_S_ATOMIC_ADD) && reducer_of(u->E, s->store.buf) >= 0) {
        u->any = true;
        for (int i = 0; i < s->store.nidx; i++) ir_expr_any(s->store.idx[i], red_var, u);
    }
    return false;
}

void elab_parallel_reducers(Elab *E, IrStmt *nest) {
    /* the perfect nest of parallel levels elaborated from one T.Parallel */
    IrStmt *lv[8];
    int n = 0;
    for (IrStmt *f = nest; f && f->kind == IR_S_FOR && f->for_.kind == IR_FOR_PARALLEL && n < 8;) {
        lv[n++] = f;
        IrStmt *b = f->for_.body;
        f = b->kind == IR_S_SEQ && b->seq.n == 1 ? b->seq.v[0] : NULL;
    }
    IrVar *vars[8];
    bool used[8] = {0};
    for (int i = 0; i < n; i++) vars[i] = lv[i]->for_.var;
    RedUse u = {E, vars, used, n, false};
    ir_stmt_any(nest, red_store, &u);
    if (!u.any) return;
    int nred = 0;
    for (int i = 0; i < n; i++) nred += !used[i];
    if (!nred) return;
    /* rebuild: the used levels (parallel, in order), then the others (serial) */
    IrStmt *body = lv[n - 1]->for_.body;
    IrStmt *order[8];
    int k = 0;
    for (int i = 0; i < n; i++)
        if (used[i]) order[k++] = lv[i];
    for (int i = 0; i < n; i++)
        if (!used[i]) order[k++] = lv[i];
    IrStmt *inner = body;
    for (int i = n - 1; i >= 0; i--) {
        const IrStmt *o = order[i];
        IrForKind kind = IR_FOR_SERIAL;
        for (int j = 0; j < n; j++)
            if (lv[j] == o && used[j]) kind = IR_FOR_PARALLEL;
        IrStmt *f = ir_for(E->a, o->for_.var, o->for_.min, o->for_.extent, kind, inner);
        f->loc = o->loc;
        if (i > 0) {
            IrStmt *seq = ir_seq(E->a);
            ir_seq_push(E->a, seq, f);
            inner = seq;
        } else {
            inner = f;
        }
    }
    IrStmt *top = inner;
    top->for_.num_stages = nest->for_.num_stages;
    top->for_.order = nest->for_.order;
    top->for_.stage = nest->for_.stage;
    top->for_.norder = nest->for_.norder;
    *nest = *top; /* in place: the nest is already in its parent's list */
}

/* ---- random numbers: T.rng_init, T.rng_rand, T.rng_rand_float -----------------------
 *
 * TileLang prints these as cuRAND's curand_init / curand / curand_uniform
 * on a curandStatePhilox4_32_10_t (tilelang/cuda/language/random.py and its
 * CUDA code generator).  Here the generator is written in the IR itself, so
 * that both targets and both interpreters run the same numbers with no
 * library: the state is a hidden per-thread local buffer `rng_state`
 * (uint32: key 0-1, 128-bit counter 2-5, position 6, the current block of
 * four outputs 7-10, round key 11-12), T.rng_init fills it and computes
 * the first block, and each draw is statements emitted before the
 * expression that uses it (read output[position], advance; after the
 * fourth, increment the counter and compute the next block).  The block
 * function is Philox4x32-10 (Salmon et al., "Parallel random numbers: as
 * easy as 1, 2, 3", SC'11: multipliers 0xD2511F53 and 0xCD9E8D57, key
 * increments 0x9E3779B9 and 0xBB67AE85); the seeding follows cuRAND's
 * documented curand_init(seed, subsequence, offset): key = seed, counter
 * words 2-3 = subsequence, counter words 0-1 = offset / 4 and the first
 * draw at offset % 4 within the block.
 */
enum { RNG_KEY = 0, RNG_CTR = 2, RNG_POS = 6, RNG_OUT = 7, RNG_RK = 11, RNG_WORDS = 13 };

static IrExpr *rng_u32(Elab *E, uint32_t v) { return ir_int(E->a, (int64_t)v, TS_UINT32); }

static IrExpr *rng_ld(Elab *E, int i) {
    IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
    idx[0] = ir_i32(E->a, i);
    return ir_load(E->a, E->rng_state, idx, 1);
}

static IrStmt *rng_st(Elab *E, int i, IrExpr *v) {
    IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
    idx[0] = ir_i32(E->a, i);
    return ir_store(E->a, E->rng_state, idx, 1, ir_cast(E->a, TS_UINT32, v));
}

static IrExpr *rng_let(Elab *E, IrStmt *seq, const char *name, IrExpr *v, TsLoc loc) {
    IrVar *x = ir_var(E->k, name, v->dt, IR_VAR_LET);
    IrStmt *s = ir_stmt(E->a, IR_S_LET, loc);
    s->let.var = x;
    s->let.value = v;
    ir_seq_push(E->a, seq, s);
    return ir_var_ref(E->a, x);
}

/* high and low words of a * b (32 x 32 -> 64 bits) */
static IrExpr *rng_mulhi(Elab *E, uint32_t a, IrExpr *b) {
    IrExpr *p = ir_bin(E->a, IR_MUL, ir_int(E->a, a, TS_UINT64), ir_cast(E->a, TS_UINT64, b));
    return ir_cast(E->a, TS_UINT32, ir_bin(E->a, IR_SHR, p, ir_int(E->a, 32, TS_UINT64)));
}

/* The statements computing output block = Philox4x32-10(counter, key). */
static IrStmt *rng_block(Elab *E, TsLoc loc) {
    TsArena *a = E->a;
    IrStmt *seq = ir_seq(a);
    for (int i = 0; i < 4; i++) ir_seq_push(a, seq, rng_st(E, RNG_OUT + i, rng_ld(E, RNG_CTR + i)));
    for (int i = 0; i < 2; i++) ir_seq_push(a, seq, rng_st(E, RNG_RK + i, rng_ld(E, RNG_KEY + i)));
    IrStmt *body = ir_seq(a);
    IrExpr *x0 = rng_let(E, body, "ph_x0", rng_ld(E, RNG_OUT), loc), *x1 = rng_let(E, body, "ph_x1", rng_ld(E, RNG_OUT + 1), loc);
    IrExpr *x2 = rng_let(E, body, "ph_x2", rng_ld(E, RNG_OUT + 2), loc), *x3 = rng_let(E, body, "ph_x3", rng_ld(E, RNG_OUT + 3), loc);
    IrExpr *k0 = rng_let(E, body, "ph_k0", rng_ld(E, RNG_RK), loc), *k1 = rng_let(E, body, "ph_k1", rng_ld(E, RNG_RK + 1), loc);
    IrExpr *hi0 = rng_mulhi(E, 0xD2511F53u, x0), *lo0 = ir_bin(a, IR_MUL, rng_u32(E, 0xD2511F53u), x0);
    IrExpr *hi1 = rng_mulhi(E, 0xCD9E8D57u, x2), *lo1 = ir_bin(a, IR_MUL, rng_u32(E, 0xCD9E8D57u), x2);
    ir_seq_push(a, body, rng_st(E, RNG_OUT, ir_bin(a, IR_BITXOR, ir_bin(a, IR_BITXOR, hi1, x1), k0)));
    ir_seq_push(a, body, rng_st(E, RNG_OUT + 1, lo1));
    ir_seq_push(a, body, rng_st(E, RNG_OUT + 2, ir_bin(a, IR_BITXOR, ir_bin(a, IR_BITXOR, hi0, x3), k1)));
    ir_seq_push(a, body, rng_st(E, RNG_OUT + 3, lo0));
    ir_seq_push(a, body, rng_st(E, RNG_RK, ir_bin(a, IR_ADD, k0, rng_u32(E, 0x9E3779B9u))));
    ir_seq_push(a, body, rng_st(E, RNG_RK + 1, ir_bin(a, IR_ADD, k1, rng_u32(E, 0xBB67AE85u))));
    IrStmt *f = ir_for(a, ir_var(E->k, "ph_round", TS_INT32, IR_VAR_LOOP), ir_i32(a, 0), ir_i32(a, 10), IR_FOR_SERIAL, body);
    f->loc = loc;
    ir_seq_push(a, seq, f);
    return seq;
}

static void rng_init(Elab *E, Args *A) {
    TsArena *a = E->a;
    TsLoc loc = A->loc;
    Value *seedv = req(E, A, 0, "seed"), *seqv = arg(E, A, 1, "seq"), *offv = arg(E, A, 2, "off");
    Value *gen = arg(E, A, 3, "generator");
    check_args(E, A, 4);
    if (gen && (gen->kind != V_STR || strcmp(gen->s, "curandStatePhilox4_32_10_t")))
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: only the generator curandStatePhilox4_32_10_t is supported", A->fn);
    if (E->ir_loops)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s must be called in the kernel's top-level code, not inside a loop", A->fn);
    IrExpr *seed = ir_cast(a, TS_UINT64, int_expr(E, seedv, loc, "the seed"));
    IrExpr *sq = seqv && seqv->kind != V_NONE ? ir_cast(a, TS_UINT64, int_expr(E, seqv, loc, "seq")) : ir_int(a, 0, TS_UINT64);
    IrExpr *off = offv && offv->kind != V_NONE ? ir_cast(a, TS_UINT64, int_expr(E, offv, loc, "off")) : ir_int(a, 0, TS_UINT64);
    IrExpr *ext = ir_i32(a, RNG_WORDS);
    E->rng_state = ir_buffer(E->k, "rng_state", TS_UINT32, IR_SCOPE_LOCAL, 1, &ext, loc);
    IrStmt *al = ir_stmt(a, IR_S_ALLOC, loc);
    al->alloc.buf = E->rng_state;
    emit(E, al);
    IrExpr *s32 = ir_int(a, 32, TS_UINT64), *q = ir_bin(a, IR_SHR, off, ir_int(a, 2, TS_UINT64));
    emit(E, rng_st(E, RNG_KEY, seed));
    emit(E, rng_st(E, RNG_KEY + 1, ir_bin(a, IR_SHR, seed, s32)));
    emit(E, rng_st(E, RNG_CTR, q));
    emit(E, rng_st(E, RNG_CTR + 1, ir_bin(a, IR_SHR, q, s32)));
    emit(E, rng_st(E, RNG_CTR + 2, sq));
    emit(E, rng_st(E, RNG_CTR + 3, ir_bin(a, IR_SHR, sq, s32)));
    emit(E, rng_st(E, RNG_POS, ir_bin(a, IR_BITAND, off, ir_int(a, 3, TS_UINT64))));
    emit(E, rng_block(E, loc));
}

/* One draw (curand): the statements that advance the state, emitted
 * here; the value drawn, a let. */
static IrExpr *rng_draw(Elab *E, Args *A) {
    TsArena *a = E->a;
    TsLoc loc = A->loc;
    bool ours = false;
    for (int i = 0; E->rng_state && i < E->k->buffers.n; i++) ours |= E->k->buffers.v[i] == E->rng_state;
    if (!ours) elab_fail(E, TS_ERR_TYPE, loc, "%s before T.rng_init in this kernel", A->fn);
    IrExpr **idx = TS_NEWN(a, IrExpr *, 1);
    idx[0] = ir_bin(a, IR_ADD, ir_i32(a, RNG_OUT), ir_cast(a, TS_INT32, rng_ld(E, RNG_POS)));
    IrStmt *seq = ir_seq(a);
    IrExpr *r = rng_let(E, seq, "rng", ir_load(a, E->rng_state, idx, 1), loc);
    IrExpr *pos = ir_bin(a, IR_ADD, rng_ld(E, RNG_POS), rng_u32(E, 1));
    ir_seq_push(a, seq, rng_st(E, RNG_POS, pos));
    /* after the fourth: counter + 1 (128 bits), the next block, position 0 */
    IrStmt *next = ir_seq(a);
    IrExpr *carry = NULL;
    for (int i = 0; i < 4; i++) {
        IrExpr *c = rng_ld(E, RNG_CTR + i);
        IrExpr *inc = i == 0 ? rng_u32(E, 1) : ir_cast(a, TS_UINT32, carry);
        IrExpr *nc = rng_let(E, next, "ctr", ir_bin(a, IR_ADD, c, inc), loc);
        ir_seq_push(a, next, rng_st(E, RNG_CTR + i, nc));
        IrExpr *z = ir_bin(a, IR_EQ, nc, rng_u32(E, 0));
        carry = i == 0 ? z : ir_bin(a, IR_AND, carry, z);
        carry = rng_let(E, next, "carry", carry, loc);
    }
    ir_seq_push(a, next, rng_block(E, loc));
    ir_seq_push(a, next, rng_st(E, RNG_POS, rng_u32(E, 0)));
    IrStmt *iff = ir_stmt(a, IR_S_IF, loc);
    iff->if_.cond = ir_bin(a, IR_EQ, rng_ld(E, RNG_POS), rng_u32(E, 4));
    iff->if_.then = next;
    ir_seq_push(a, seq, iff);
    for (int i = 0; i < seq->seq.n; i++) emit(E, seq->seq.v[i]);
    return r;
}

/*
 * T.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad): the
 * tile of a 2-D convolution's im2col matrix that col holds.  img is NHWC
 * [N, H, W, C]; row m of the matrix is an output position (n, oh, ow) in
 * row-major order over [N, OH, OW], column k a filter tap (kh, kw, c) over
 * [kernel, kernel, C]; OH = (H + 2 pad - dilation (kernel - 1) - 1) //
 * stride + 1, OW likewise; the element is img[n, oh stride + kh dilation -
 * pad, ow stride + kw dilation - pad, c], 0 outside the image (TileLang's
 * meaning: src/op/copy.cc, LowerIm2ColSIMT).  col's last two dims are the
 * tile [block_M, block_K] of rows nhw_step * block_M.. and columns c_step *
 * block_K..; rows past N * OH * OW and columns past kernel^2 C are 0 here
 * too (TileLang reads past the image there).  Emitted as the T.Parallel
 * nest that computes it, which every pass treats as any other.
 */
/* `for vi in T.Parallel(ni): for vj in T.Parallel(nj): body`, each loop's
 * body a sequence (the shape the elaborator gives a written T.Parallel nest). */
static IrStmt *parallel2(TsArena *a, TsLoc loc, IrVar *vi, int64_t ni, IrVar *vj, int64_t nj, IrStmt *body) {
    IrStmt *inner = ir_seq(a);
    ir_seq_push(a, inner, body);
    IrStmt *fj = ir_for(a, vj, ir_i32(a, 0), ir_i32(a, nj), IR_FOR_PARALLEL, inner);
    fj->loc = loc;
    IrStmt *mid = ir_seq(a);
    ir_seq_push(a, mid, fj);
    IrStmt *fi = ir_for(a, vi, ir_i32(a, 0), ir_i32(a, ni), IR_FOR_PARALLEL, mid);
    fi->loc = loc;
    return fi;
}

static void im2col(Elab *E, Args *A) {
    TsArena *a = E->a;
    TsLoc loc = A->loc;
    IrRegion img = val_to_region(E, req(E, A, 0, "img"), loc, "T.im2col's img");
    IrRegion col = val_to_region(E, req(E, A, 1, "col"), loc, "T.im2col's col");
    IrExpr *nhw = int_expr(E, req(E, A, 2, "nhw_step"), loc, "nhw_step");
    IrExpr *cst = int_expr(E, req(E, A, 3, "c_step"), loc, "c_step");
    int64_t kern = val_to_int(E, req(E, A, 4, "kernel"), loc, "kernel");
    Value *sv = arg(E, A, 5, "stride"), *dv = arg(E, A, 6, "dilation"), *pv = arg(E, A, 7, "pad");
    int64_t stride = sv ? val_to_int(E, sv, loc, "stride") : 1, dil = dv ? val_to_int(E, dv, loc, "dilation") : 1;
    int64_t pad = pv ? val_to_int(E, pv, loc, "pad") : 0;
    ignore_kw(A, "eviction_policy");
    ignore_kw(A, "annotations");
    check_args(E, A, 9);
    if (img.buf->ndim != 4)
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: img must be a 4-D NHWC tensor, '%s' has %d dims", A->fn, img.buf->name,
                  img.buf->ndim);
    if (col.ndim < 2) elab_fail(E, TS_ERR_SHAPE, loc, "%s: col must have 2 dims (block_M, block_K)", A->fn);
    if (img.buf->dt != col.buf->dt)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: img is %s and col %s: they must have one dtype", A->fn,
                  ts_dtype_name(img.buf->dt), ts_dtype_name(col.buf->dt));
    if (kern < 1 || stride < 1 || dil < 1 || pad < 0)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: kernel, stride and dilation must be positive and pad not negative", A->fn);
    int nd = col.ndim;
    int64_t bm, bk;
    if (!ir_is_const_int(col.extent[nd - 2], &bm) || !ir_is_const_int(col.extent[nd - 1], &bk))
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: col's tile extents must be constants", A->fn);
    IrExpr **sh = img.buf->shape;
    IrExpr *N = sh[0], *H = sh[1], *W = sh[2], *C = sh[3];
#define I64(v) ir_int(a, (v), TS_INT64)
#define B(op, x, y) ir_bin(a, op, x, y)
    IrExpr *reach = I64(dil * (kern - 1) + 1);
    IrExpr *OH = B(IR_ADD, B(IR_FLOORDIV, B(IR_SUB, B(IR_ADD, ir_cast(a, TS_INT64, H), I64(2 * pad)), reach), I64(stride)), I64(1));
    IrExpr *OW = B(IR_ADD, B(IR_FLOORDIV, B(IR_SUB, B(IR_ADD, ir_cast(a, TS_INT64, W), I64(2 * pad)), reach), I64(stride)), I64(1));
    IrVar *vi = ir_var(E->k, "i", TS_INT32, IR_VAR_LOOP), *vj = ir_var(E->k, "j", TS_INT32, IR_VAR_LOOP);
    IrExpr *m = B(IR_ADD, B(IR_MUL, ir_cast(a, TS_INT64, nhw), I64(bm)), ir_var_ref(a, vi));
    IrExpr *k = B(IR_ADD, B(IR_MUL, ir_cast(a, TS_INT64, cst), I64(bk)), ir_var_ref(a, vj));
    IrExpr *ohw = B(IR_MUL, OH, OW);
    IrExpr *n = B(IR_FLOORDIV, m, ohw);
    IrExpr *oh = B(IR_FLOORDIV, B(IR_FLOORMOD, m, ohw), OW), *ow = B(IR_FLOORMOD, m, OW);
    IrExpr *C64 = ir_cast(a, TS_INT64, C);
    IrExpr *kh = B(IR_FLOORDIV, k, B(IR_MUL, I64(kern), C64)), *kw = B(IR_FLOORMOD, B(IR_FLOORDIV, k, C64), I64(kern));
    IrExpr *c = B(IR_FLOORMOD, k, C64);
    IrExpr *h = B(IR_SUB, B(IR_ADD, B(IR_MUL, oh, I64(stride)), B(IR_MUL, kh, I64(dil))), I64(pad));
    IrExpr *w = B(IR_SUB, B(IR_ADD, B(IR_MUL, ow, I64(stride)), B(IR_MUL, kw, I64(dil))), I64(pad));
    IrExpr *in = B(IR_AND, B(IR_AND, B(IR_GE, h, I64(0)), B(IR_LT, h, ir_cast(a, TS_INT64, H))),
                   B(IR_AND, B(IR_GE, w, I64(0)), B(IR_LT, w, ir_cast(a, TS_INT64, W))));
    in = B(IR_AND, in, B(IR_AND, B(IR_LT, n, ir_cast(a, TS_INT64, N)), B(IR_LT, kh, I64(kern))));
    /* the load only where in range (a select evaluates its taken side only;
     * the clamp keeps the index inside even so, for code that hoists it) */
    IrExpr *z = I64(0);
    IrExpr *li[4] = {B(IR_MIN, n, B(IR_SUB, ir_cast(a, TS_INT64, N), I64(1))),
                     B(IR_MAX, B(IR_MIN, h, B(IR_SUB, ir_cast(a, TS_INT64, H), I64(1))), z),
                     B(IR_MAX, B(IR_MIN, w, B(IR_SUB, ir_cast(a, TS_INT64, W), I64(1))), z), c};
    IrExpr **lidx = TS_NEWN(a, IrExpr *, 4);
    for (int d = 0; d < 4; d++) lidx[d] = B(IR_ADD, ir_cast(a, TS_INT64, img.start[d]), li[d]);
    IrExpr *val = ir_select(a, in, ir_load(a, img.buf, lidx, 4), ir_cast(a, col.buf->dt, z));
#undef I64
#undef B
    IrExpr **didx = TS_NEWN(a, IrExpr *, nd);
    for (int d = 0; d < nd; d++) didx[d] = col.start[d];
    didx[nd - 2] = ir_bin(a, IR_ADD, col.start[nd - 2], ir_var_ref(a, vi));
    didx[nd - 1] = ir_bin(a, IR_ADD, col.start[nd - 1], ir_var_ref(a, vj));
    IrStmt *st = ir_store(a, col.buf, didx, col.buf->ndim, val);
    st->loc = loc;
    emit(E, parallel2(a, loc, vi, bm, vj, bk, st));
}

/*
 * T.gemm_sp(A_sparse, E, B, C, transpose_A=False, transpose_B=False,
 * transpose_E=False, policy=, clear_accum=False, k_pack=1, wg_wait=0):
 * C += A @ B (B transposed with transpose_B) where A is a 2:4 sparse
 * [block_M, block_K] tile given compressed: A_sparse [block_M, block_K / 2]
 * holds the two kept values of each group of 4 along K, in order, and E
 * [block_M, block_K / e_factor] their positions in TileLang's natural
 * row-major metadata (tile-ai/tilelang examples/gemm_sp/sparse_utils.py
 * torch_compress and its _compress_fn kernel): 4 bits per group, the low
 * chunk first, bits [1:0] the first kept position (0..3) and bits [3:2] the
 * second; e_factor = 4 x (bits of E's dtype) / 4 (tilelang/cuda/intrinsics/
 * sparse_layout.py get_e_factor, 16-bit and 8-bit A).
 *
 * Built without sparse tensor cores (mma.sp / wgmma.sp are not generated):
 * emitted as the T.Parallel nest that expands A into a dense shared tile
 * (each element the kept value whose position it is, else 0) followed by
 * T.gemm of that tile, which every pass treats as any other (tensor-core
 * mma / wgmma on CUDA, loops on the C target).  Same values as TileLang's,
 * half its tensor-core throughput at best.  transpose_A, transpose_E and
 * 32-bit A (TileLang's 1:2 float32 form) are refused.
 */
static void gemm_sp(Elab *E, Args *A) {
    TsArena *a = E->a;
    TsLoc loc = A->loc;
    Value *av = req(E, A, 0, "A_sparse"), *ev = req(E, A, 1, "E"), *bv = req(E, A, 2, "B"), *cv = req(E, A, 3, "C");
    IrRegion ar = val_to_region(E, av, loc, "T.gemm_sp operand A_sparse");
    IrRegion er = val_to_region(E, ev, loc, "T.gemm_sp metadata E");
    if (flag(E, A, 4, "transpose_A", false) || flag(E, A, -1, "transpose_E", false))
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: transpose_A / transpose_E are not supported (A_sparse [block_M, "
                  "block_K / 2] and E [block_M, block_K / e_factor], row-major)", A->fn);
    if (ar.ndim != 2 || er.ndim != 2)
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: A_sparse and E must be 2-D tiles", A->fn);
    int bits = ts_dtype_bits(ar.buf->dt), ebits = ts_dtype_bits(er.buf->dt);
    if (bits != 16 && bits != 8)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: A_sparse of %s: only 16-bit and 8-bit operands (2:4 sparsity) are "
                  "supported", A->fn, ts_dtype_name(ar.buf->dt));
    if (!ts_dtype_is_int(er.buf->dt) || (ebits != 8 && ebits != 16 && ebits != 32))
        elab_fail(E, TS_ERR_TYPE, loc, "%s: metadata E must be int8, int16 or int32 (or unsigned), got %s", A->fn,
                  ts_dtype_name(er.buf->dt));
    int64_t bm, bh, em, ek;
    if (!ir_is_const_int(ar.extent[0], &bm) || !ir_is_const_int(ar.extent[1], &bh) ||
        !ir_is_const_int(er.extent[0], &em) || !ir_is_const_int(er.extent[1], &ek))
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: the tiles' extents must be constants", A->fn);
    int64_t bk = 2 * bh, ef = ebits; /* e_factor: (ebits / 4) groups of 4 elements per metadata element */
    if (em != bm || ek * ef != bk)
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: E is [%lld, %lld] but A_sparse [%lld, %lld] needs [%lld, %lld] of %s "
                  "(e_factor %lld)", A->fn, (long long)em, (long long)ek, (long long)bm, (long long)bh,
                  (long long)bm, (long long)(bk / ef), ts_dtype_name(er.buf->dt), (long long)ef);
    /* the dense tile */
    IrExpr **ext = TS_NEWN(a, IrExpr *, 2);
    ext[0] = ir_i32(a, bm);
    ext[1] = ir_i32(a, bk);
    IrBuffer *db = ir_buffer(E->k, "A_dense", ar.buf->dt, IR_SCOPE_SHARED, 2, ext, loc);
    IrStmt *al = ir_stmt(a, IR_S_ALLOC, loc);
    al->alloc.buf = db;
    emit(E, al);
    IrVar *vi = ir_var(E->k, "i", TS_INT32, IR_VAR_LOOP), *vk = ir_var(E->k, "k", TS_INT32, IR_VAR_LOOP);
#define I32(v) ir_i32(a, (v))
#define B(op, x, y) ir_bin(a, op, x, y)
    IrExpr *i = ir_var_ref(a, vi), *k = ir_var_ref(a, vk);
    IrExpr **ei = TS_NEWN(a, IrExpr *, 2);
    ei[0] = B(IR_ADD, er.start[0], i);
    ei[1] = B(IR_ADD, er.start[1], B(IR_FLOORDIV, k, I32(ef)));
    IrExpr *word = ir_cast(a, TS_INT32, ir_load(a, er.buf, ei, 2));
    IrExpr *nib = B(IR_BITAND, B(IR_SHR, word, B(IR_MUL, I32(4), B(IR_FLOORDIV, B(IR_FLOORMOD, k, I32(ef)), I32(4)))),
                    I32(15));
    IrExpr *pos = B(IR_FLOORMOD, k, I32(4));
    IrExpr *kept[2];
    for (int h = 0; h < 2; h++) {
        IrExpr **ai = TS_NEWN(a, IrExpr *, 2);
        ai[0] = B(IR_ADD, ar.start[0], i);
        ai[1] = B(IR_ADD, ar.start[1], B(IR_ADD, B(IR_MUL, B(IR_FLOORDIV, k, I32(4)), I32(2)), I32(h)));
        kept[h] = ir_load(a, ar.buf, ai, 2);
    }
    IrExpr *first = B(IR_BITAND, nib, I32(3)), *second = B(IR_BITAND, B(IR_SHR, nib, I32(2)), I32(3));
    IrExpr *val = ir_select(a, B(IR_EQ, pos, first), kept[0],
                            ir_select(a, B(IR_EQ, pos, second), kept[1], ir_cast(a, ar.buf->dt, I32(0))));
#undef I32
#undef B
    IrExpr **di = TS_NEWN(a, IrExpr *, 2);
    di[0] = ir_var_ref(a, vi);
    di[1] = ir_var_ref(a, vk);
    IrStmt *st = ir_store(a, db, di, 2, val);
    st->loc = loc;
    emit(E, parallel2(a, loc, vi, bm, vk, bk, st));
    /* T.gemm(A_dense, B, C, transpose_B=, policy=, clear_accum=, k_pack=, wg_wait=) */
    static const char *const pass_kw[] = {"transpose_B", "policy", "clear_accum", "k_pack", "wg_wait"};
    const char *kw[5];
    Value *kwv[5];
    int nkw = 0;
    for (int j = 0; j < 5; j++) {
        Value *x = arg(E, A, j == 0 ? 5 : j == 1 ? 7 : j == 2 ? 8 : j == 3 ? 9 : 10, pass_kw[j]);
        if (x) {
            kw[nkw] = pass_kw[j];
            kwv[nkw++] = x;
        }
    }
    check_args(E, A, 11);
    Value *dv = val_new(E, V_BUFFER, loc);
    dv->buf = db;
    Value *gargs[3] = {dv, bv, cv};
    builtin_call(E, builtin_value(E, B_GEMM, loc), gargs, 3, kw, kwv, nkw, loc);
}

/* The kernel's thread index along one axis of threads= (named as CUDA
 * names it; the analyses know its range from the axis). */
static IrVar *thread_var(Elab *E, int axis) {
    static const char *names[3] = {"threadIdx_x", "threadIdx_y", "threadIdx_z"};
    IrVar *v = ir_var(E->k, names[axis], TS_INT32, IR_VAR_THREAD_IDX);
    v->axis = axis;
    return v;
}

static IrStmt *tileop(Elab *E, TsOpKind kind, TsLoc loc) {
    IrStmt *s = ir_stmt(E->a, IR_S_TILEOP, loc);
    s->op = TS_NEW(E->a, IrTileOp);
    s->op->kind = kind;
    return s;
}

/* Extents of a region, as given or (for a single element written as the
 * start of a tile) taken from the other operand, trailing dims aligned. */
static IrRegion copy_region(Elab *E, Value *v, Value *other, TsLoc loc, const char *what) {
    IrRegion r = val_to_region(E, v, loc, what);
    if (v->kind != V_ACCESS || other->kind == V_ACCESS) return r;
    IrRegion o = val_to_region(E, other, loc, what);
    /* the other side's extents without leading 1s */
    int first = 0;
    while (first < o.ndim - 1) {
        int64_t c;
        if (!ir_is_const_int(o.extent[first], &c) || c != 1) break;
        first++;
    }
    int m = o.ndim - first;
    if (m > r.ndim)
        elab_fail(E, TS_ERR_SHAPE, loc, "%s: a %d-d tile cannot start at an element of %d-d buffer '%s'",
                  what, m, r.ndim, r.buf->name);
    for (int i = 0; i < m; i++) r.extent[r.ndim - m + i] = o.extent[first + i];
    return r;
}

/* An int4 or float4_e2m1fn buffer packed two to an int8 byte (shared,
 * global; see elab_int4_view). */
static bool packed4(const IrBuffer *b) { return b->base && ts_dtype_bits(b->dt) == 4 && b->base->dt == TS_INT8; }

/* A T.copy with a packed 4-bit side (see elab_int4_view): between two
 * packed buffers of one dtype it becomes the copy of their bytes, each
 * region's last start and extent halved (both must be even: a byte is never
 * split between two tiles, so no two threads ever write one); a copy out of
 * one into another dtype reads elements (int4 sign-extended, float4_e2m1fn
 * decoded).  A copy into float4_e2m1fn from anything else (a fragment of
 * codes, a float tile) converts element by element: resolve_views gives
 * each thread both halves of its bytes (pair_int4_loop).  A copy into int4
 * from another dtype would write half bytes from many threads: refused. */
static void copy_int4_bytes(Elab *E, IrRegion *r, TsLoc loc) {
    bool p0 = packed4(r[0].buf), p1 = packed4(r[1].buf);
    if (!p1) return;
    if (r[1].buf->dt == TS_INT4 && !(p0 && r[0].buf->dt == TS_INT4))
        elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                  "T.copy into the int4 buffer '%s' from the %s buffer '%s' is not supported (int4 is packed two to "
                  "a byte: copy int4 to int4, which moves whole bytes)",
                  r[1].buf->name, ts_dtype_name(r[0].buf->dt), r[0].buf->name);
    if (!p0 || r[0].buf->dt != r[1].buf->dt) return;
    IrArith ar;
    ir_arith_init(&ar, E->a, E->k);
    for (int i = 0; i < 2; i++) {
        IrRegion *x = &r[i];
        int d = x->ndim - 1;
        int64_t e;
        if (!x->buf->base || x->buf->base->ndim != x->ndim)
            elab_fail(E, TS_ERR_INTERNAL, loc, "T.copy: the %s buffer '%s' is not a view of its bytes",
                      ts_dtype_name(x->buf->dt), x->buf->name);
        if (!ir_is_const_int(x->extent[d], &e) || e % 2 || !ir_arith_divisible(&ar, x->start[d], 2))
            elab_fail(E, TS_ERR_SHAPE, loc,
                      "T.copy of %s tiles moves whole bytes: the last dimension of '%s' must start at an even "
                      "element and span an even constant (region %s)",
                      ts_dtype_name(x->buf->dt), x->buf->name, op_region_text(E->a, x));
        IrExpr **st = TS_NEWN(E->a, IrExpr *, x->ndim), **ex = TS_NEWN(E->a, IrExpr *, x->ndim);
        for (int j = 0; j < x->ndim; j++) {
            st[j] = x->start[j];
            ex[j] = x->extent[j];
        }
        st[d] = ir_arith_simplify(&ar, ir_bin(E->a, IR_FLOORDIV, x->start[d], ir_int(E->a, 2, x->start[d]->dt)));
        ex[d] = ir_int(E->a, e / 2, x->extent[d]->dt);
        x->buf = x->buf->base;
        x->start = st;
        x->extent = ex;
    }
}

static int norm_dim(Elab *E, Value *v, int ndim, TsLoc loc, const char *fn) {
    int64_t d = val_to_int(E, v, loc, "dim");
    if (d < 0) d += ndim;
    if (d < 0 || d >= ndim)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: dim %lld is out of range for a %d-d buffer", fn,
                  (long long)val_to_int(E, v, loc, "dim"), ndim);
    return (int)d;
}


/* T.Pipelined(..., group=[[0, 1], [2], ...]): TileLang's groups of loop-body
 * statements, with order= and stage= then giving one entry per group.  The
 * lists are expanded to one entry per statement (a group's statements take
 * its stage and keep their relative order at its place), the form the
 * pipeline passes read; -1 entries (TileLang's warp-specialization marks)
 * stay -1.  Groups must cover statements 0..n-1 exactly once. */
static void expand_groups(Elab *E, IterSpec *it, Value *gv, TsLoc loc) {
    int ng;
    Value **groups = val_items(E, gv, &ng);
    if (ng == 0) return;
    if (it->norder && it->norder != ng)
        elab_fail(E, TS_ERR_TYPE, loc,
                  "T.Pipelined: group= has %d groups but order=/stage= have %d entries (one per group)", ng,
                  it->norder);
    int m = 0;
    int *gsize = TS_NEWN(E->a, int, ng);
    Value ***members = TS_NEWN(E->a, Value **, ng);
    for (int g = 0; g < ng; g++) {
        members[g] = val_items(E, groups[g], &gsize[g]);
        m += gsize[g];
    }
    if (m == 0 || m > 4096) elab_fail(E, TS_ERR_TYPE, loc, "T.Pipelined: group= must list the loop body's statements");
    int *of = TS_NEWN(E->a, int, m), *pos = TS_NEWN(E->a, int, m);
    for (int i = 0; i < m; i++) of[i] = -1;
    for (int g = 0; g < ng; g++)
        for (int p = 0; p < gsize[g]; p++) {
            int64_t x = val_to_int(E, members[g][p], loc, "a group= entry");
            if (x < 0 || x >= m || of[x] >= 0)
                elab_fail(E, TS_ERR_TYPE, loc,
                          "T.Pipelined: group= must list each statement 0..%d once (statement %lld)", m - 1,
                          (long long)x);
            of[x] = g;
            pos[x] = p;
        }
    if (!it->norder) return; /* groups alone change nothing */
    int *order = it->order ? TS_NEWN(E->a, int, m) : NULL, *stage = it->stage ? TS_NEWN(E->a, int, m) : NULL;
    for (int i = 0; i < m; i++) {
        int g = of[i];
        if (stage) stage[i] = it->stage[g];
        if (!order) continue;
        if (it->order[g] < 0) {
            order[i] = -1;
            continue;
        }
        /* rank of (group order, position) among all statements */
        int r = 0;
        for (int j = 0; j < m; j++) {
            int h = of[j];
            if (it->order[h] < 0) continue;
            r += it->order[h] < it->order[g] || (it->order[h] == it->order[g] && h == g && pos[j] < pos[i]);
        }
        order[i] = r;
    }
    it->order = order;
    it->stage = stage;
    it->norder = m;
}

static Value *make_iter(Elab *E, Args *A, IrForKind kind) {
    IterSpec *it = TS_NEW(E->a, IterSpec);
    it->kind = kind;
    Value *v = val_new(E, V_ITER, A->loc);
    v->iter = it;
    if (kind == IR_FOR_PARALLEL) {
        ignore_kw(A, "coalesced_width");
        ignore_kw(A, "loop_layout");
        ignore_kw(A, "prefer_async");
        ignore_kw(A, "annotations");
        if (A->n < 1 || A->n > 4) elab_fail(E, TS_ERR_TYPE, A->loc, "T.Parallel takes 1 to 4 extents");
        it->n = A->n;
        for (int i = 0; i < A->n; i++) {
            it->start[i] = ir_i32(E->a, 0);
            it->extent[i] = int_expr(E, A->v[i], A->loc, "a T.Parallel extent");
        }
        check_args(E, A, 4);
        return v;
    }
    /* (start, stop, step) or (extent) */
    Value *a0 = req(E, A, 0, kind == IR_FOR_PIPELINED ? "start" : "start");
    Value *a1 = arg(E, A, 1, "stop");
    Value *a2 = kind == IR_FOR_PIPELINED ? NULL : arg(E, A, 2, "step");
    it->n = 1;
    if (a1 && a1->kind != V_NONE) {
        it->start[0] = int_expr(E, a0, A->loc, "a loop bound");
        IrExpr *stop = int_expr(E, a1, A->loc, "a loop bound");
        it->extent[0] = ir_bin(E->a, IR_SUB, stop, it->start[0]);
    } else {
        it->start[0] = ir_i32(E->a, 0);
        it->extent[0] = int_expr(E, a0, A->loc, "a loop extent");
    }
    if (a2 && a2->kind != V_NONE) {
        int64_t st = val_to_int(E, a2, A->loc, "a loop step");
        if (st == 0) elab_fail(E, TS_ERR_TYPE, A->loc, "loop step cannot be zero");
        it->step = ir_i32(E->a, st);
        /* extent = ceil((stop - start) / step) */
        IrExpr *span = it->extent[0];
        it->extent[0] = st > 0 ? ir_bin(E->a, IR_FLOORDIV, ir_bin(E->a, IR_ADD, span, ir_i32(E->a, st - 1)), it->step)
                               : ir_bin(E->a, IR_FLOORDIV, ir_bin(E->a, IR_ADD, span, ir_i32(E->a, st + 1)), it->step);
        int64_t ext;
        if (ir_is_const_int(it->extent[0], &ext) && ext < 0) it->extent[0] = ir_i32(E->a, 0);
    }
    if (kind == IR_FOR_PIPELINED) {
        Value *ns = arg(E, A, -1, "num_stages");
        int64_t nsv = ns ? val_to_int(E, ns, A->loc, "num_stages") : 0;
        /* a bound: each stage is a copy of the loop's tiles, and the
         * pipeline passes' work grows with the square of the count (the
         * fuzzer's num_stages=100000 took 26 s and 2 GB before the shared
         * memory check); the int cast truncated 4294967297 to 1 */
        if (nsv < 0 || nsv > 64)
            elab_fail(E, TS_ERR_TYPE, A->loc, "num_stages must be from 0 to 64, got %lld", (long long)nsv);
        it->num_stages = (int)nsv;
        const char *lists[2] = {"order", "stage"};
        for (int l = 0; l < 2; l++) {
            Value *lv = arg(E, A, -1, lists[l]);
            if (!lv || lv->kind == V_NONE) continue;
            int n;
            Value **items = val_items(E, lv, &n);
            int *out = TS_NEWN(E->a, int, n ? n : 1);
            for (int i = 0; i < n; i++) out[i] = (int)val_to_int(E, items[i], A->loc, lists[l]);
            if (l == 0) it->order = out;
            else it->stage = out;
            it->norder = n;
        }
        ignore_kw(A, "sync");
        Value *gv = arg(E, A, -1, "group");
        if (gv && gv->kind != V_NONE) expand_groups(E, it, gv, A->loc);
    }
    if (kind == IR_FOR_SERIAL) ignore_kw(A, "annotations");
    check_args(E, A, kind == IR_FOR_PIPELINED ? 2 : 3);
    return v;
}

/* T.annotate_layout({b: layout}) for a shared buffer b: the physical
 * layout overrides what layout inference would choose (IrBuffer.swizzle,
 * swizzle_annotated).  tilelang.layout.make_swizzled_layout(b) (and its
 * full/half/quarter-bank variants) is the CUDA target's XOR swizzle for the
 * tile (ir_swizzle_for_tile; none where it does not apply); a def (or
 * T.Layout(shape, def)) mapping the indices to physical indices is run
 * once on placeholder variables and recognized by enumeration as
 * row-major or an XOR swizzle of 16-byte chunks, the layouts the CUDA
 * target addresses; another map is an error there (the C target ignores
 * physical layouts: its results do not depend on them).  Layouts of
 * fragments, and layout objects this compiler does not model, are
 * ignored (layout inference decides those). */
static void annotate_one(Elab *E, IrBuffer *b, Value *lv, TsLoc loc) {
    if (b->scope != IR_SCOPE_SHARED || b->ndim < 1 || b->ndim > 8) return;
    int64_t shape[8];
    for (int d = 0; d < b->ndim; d++)
        if (!ir_is_const_int(b->shape[d], &shape[d])) return;
    Value *fn = lv->kind == V_FUNC ? lv : NULL;
    if (lv->kind == V_ENUM && !strcmp(lv->s, "layout:fn")) fn = lv->items[0];
    if (lv->kind == V_ENUM && !strcmp(lv->s, "layout:swizzled")) {
        ir_swizzle_for_tile(ts_dtype_bits(b->dt), shape, b->ndim, &b->swizzle);
        b->swizzle_annotated = 1;
        return;
    }
    if (!fn) return;
    Value *args[8];
    IrVar *in[8];
    for (int d = 0; d < b->ndim; d++) {
        in[d] = ir_var(E->k, ts_sprintf(E->a, "i%d", d), TS_INT32, IR_VAR_LET);
        args[d] = val_expr(E, ir_var_ref(E->a, in[d]), loc);
    }
    Value *r = call_value(E, fn, args, b->ndim, NULL, NULL, 0, loc);
    int nphys = 1;
    Value **items = &r;
    if (r->kind == V_TUPLE || r->kind == V_LIST) {
        nphys = r->n;
        items = r->items;
    }
    IrExpr *phys[8];
    int rc = nphys >= 1 && nphys <= 8 ? 0 : -1;
    for (int j = 0; j < nphys && rc == 0; j++) phys[j] = val_to_expr(E, items[j], loc);
    IrSwizzle z;
    if (rc == 0) rc = ir_swizzle_match(in, shape, b->ndim, phys, nphys, &z);
    /* a swizzle must move whole 16-byte chunks (vector copies stay whole) */
    int64_t es = (ts_dtype_bits(b->dt) + 7) / 8;
    if (rc == 1 && ((int64_t)1 << z.base) * es != 16) rc = -1;
    if (rc < 0) {
        if (E->caps && E->caps->sm > 0)
            elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                      "T.annotate_layout: the layout given for shared buffer '%s' is neither row-major nor an XOR "
                      "swizzle of its 16-byte chunks, the layouts the CUDA target can address",
                      b->name);
        return;
    }
    b->swizzle = rc == 1 ? z : (IrSwizzle){0};
    b->swizzle_annotated = 1;
}

static Value *minmax(Elab *E, Args *A, bool is_max) {
    if (A->n == 1 && (A->v[0]->kind == V_TUPLE || A->v[0]->kind == V_LIST)) {
        Args B = *A;
        B.v = A->v[0]->items;
        B.n = A->v[0]->n;
        return minmax(E, &B, is_max);
    }
    if (A->n < 1) elab_fail(E, TS_ERR_TYPE, A->loc, "%s needs arguments", A->fn);
    Value *acc = A->v[0];
    for (int i = 1; i < A->n; i++) {
        Value *b = A->v[i];
        if (val_is_const(acc) && val_is_const(b)) {
            Value *gt = binop(E, AST_GT, b, acc, A->loc);
            if (is_max ? gt->b : !gt->b && !binop(E, AST_EQ, b, acc, A->loc)->b) acc = b;
        } else {
            IrExpr *x = val_to_expr(E, acc, A->loc), *y = val_to_expr(E, b, A->loc);
            if (val_is_const(acc) && ts_dtype_is_float(y->dt)) x = ir_cast(E->a, y->dt, x);
            if (val_is_const(b) && ts_dtype_is_float(x->dt)) y = ir_cast(E->a, x->dt, y);
            acc = val_expr(E, ir_bin(E->a, is_max ? IR_MAX : IR_MIN, x, y), A->loc);
        }
    }
    return acc;
}

static double dtype_limit(TsDType dt, bool max) {
    switch (dt) {
    case TS_FLOAT16: return max ? 65504.0 : -65504.0;
    case TS_BFLOAT16: return max ? 3.3895313892515355e38 : -3.3895313892515355e38;
    case TS_FLOAT32: return max ? 3.4028234663852886e38 : -3.4028234663852886e38;
    case TS_FLOAT64: return max ? 1.7976931348623157e308 : -1.7976931348623157e308;
    case TS_FLOAT8_E4M3: return max ? 448.0 : -448.0;
    case TS_FLOAT8_E5M2: return max ? 57344.0 : -57344.0;
    default: {
        int bits = ts_dtype_bits(dt);
        bool sgn = ts_dtype_info(dt)->kind == 'i';
        if (dt == TS_BOOL) return max ? 1 : 0;
        if (sgn) return max ? (double)((1ull << (bits - 1)) - 1) : -(double)(1ull << (bits - 1));
        return max ? (double)((bits == 64) ? 18446744073709551615.0 : (double)((1ull << bits) - 1)) : 0;
    }
    }
}

static Value *cast_to(Elab *E, Value *v, TsDType dt, TsLoc loc) {
    if (val_is_const(v)) {
        if (ts_dtype_is_float(dt)) return val_expr(E, ir_float(E->a, v->kind == V_FLOAT ? v->f : (double)(v->kind == V_INT ? v->i : v->b), dt), loc);
        int64_t i = v->kind == V_FLOAT ? (int64_t)v->f : v->kind == V_INT ? v->i : v->b;
        if (dt == TS_BOOL) i = i != 0;
        return val_expr(E, ir_int(E->a, i, dt), loc);
    }
    return val_expr(E, ir_cast(E->a, dt, val_to_expr(E, v, loc)), loc);
}

Value *builtin_subscript(Elab *E, Value *f, Value *ix, TsLoc loc) {
    if (f->bi == B_TENSOR || f->bi == B_TENSOR2) {
        int n;
        Value **items = val_items(E, ix, &n);
        if (ix->kind != V_TUPLE || n < 1 || n > 2)
            elab_fail(E, TS_ERR_TYPE, loc, "T.Tensor[...] takes a shape and a dtype");
        return builtin_call(E, f, items, n, NULL, NULL, 0, loc);
    }
    elab_fail(E, TS_ERR_TYPE, loc, "T.%s cannot be indexed", builtin_name(f->bi));
}

/* ---- the dispatcher -------------------------------------------------------------------------------- */

/* A string value's text: a str, or a dtype's name (TileLang's dtypes are
 * strings to Python code). */
static const char *str_of(Elab *E, Value *v, TsLoc loc, const char *what) {
    if (v->kind == V_STR) return v->s;
    if (v->kind == V_DTYPE) return ts_dtype_name(v->dt);
    elab_fail(E, TS_ERR_TYPE, loc, "%s needs a str, got %s", what, val_kind_name(v));
}

static bool in_chars(char c, const char *chars) { return chars ? strchr(chars, c) != NULL && c : c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* The string methods Python code in factories uses, on a str (or a dtype's name). */
static Value *str_method(Elab *E, const char *self, const char *name, Args *A) {
    TsLoc loc = A->loc;
    size_t n = strlen(self);
    if (!strcmp(name, "strip") || !strcmp(name, "lstrip") || !strcmp(name, "rstrip")) {
        Value *c = arg(E, A, 0, "chars");
        check_args(E, A, 1);
        const char *chars = c && c->kind != V_NONE ? str_of(E, c, loc, A->fn) : NULL;
        size_t b = 0, e = n;
        if (name[0] != 'r') while (b < e && in_chars(self[b], chars)) b++;
        if (name[0] != 'l') while (e > b && in_chars(self[e - 1], chars)) e--;
        return val_str(E, ts_strndup(E->a, self + b, e - b), loc);
    }
    if (!strcmp(name, "lower") || !strcmp(name, "upper") || !strcmp(name, "capitalize")) {
        check_args(E, A, 0);
        char *r = ts_strndup(E->a, self, n);
        for (size_t i = 0; i < n; i++) {
            char c = r[i];
            bool up = name[0] == 'u' || (name[0] == 'c' && i == 0);
            if (up && c >= 'a' && c <= 'z') r[i] = (char)(c - 32);
            if (!up && c >= 'A' && c <= 'Z') r[i] = (char)(c + 32);
        }
        return val_str(E, r, loc);
    }
    if (!strcmp(name, "isdigit") || !strcmp(name, "isalpha")) {
        check_args(E, A, 0);
        bool all = n > 0;
        for (size_t i = 0; i < n; i++) {
            char c = self[i];
            all &= name[2] == 'd' ? c >= '0' && c <= '9' : (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        }
        return val_bool(E, all, loc);
    }
    if (!strcmp(name, "startswith") || !strcmp(name, "endswith")) {
        Value *p = req(E, A, 0, "prefix");
        check_args(E, A, 1);
        int np;
        Value **ps = p->kind == V_TUPLE ? val_items(E, p, &np) : (np = 1, &p);
        for (int i = 0; i < np; i++) {
            const char *x = str_of(E, ps[i], loc, A->fn);
            size_t m = strlen(x);
            if (m <= n && !strncmp(name[0] == 's' ? self : self + n - m, x, m)) return val_bool(E, true, loc);
        }
        return val_bool(E, false, loc);
    }
    if (!strcmp(name, "find") || !strcmp(name, "count")) {
        const char *x = str_of(E, req(E, A, 0, "sub"), loc, A->fn);
        check_args(E, A, 1);
        const char *p = strstr(self, x);
        if (name[0] == 'f') return val_int(E, p ? (int64_t)(p - self) : -1, loc);
        int64_t c = 0;
        size_t m = strlen(x);
        if (!m) return val_int(E, (int64_t)n + 1, loc);
        for (; p; p = strstr(p + m, x)) c++;
        return val_int(E, c, loc);
    }
    if (!strcmp(name, "replace")) {
        const char *o = str_of(E, req(E, A, 0, "old"), loc, A->fn), *w = str_of(E, req(E, A, 1, "new"), loc, A->fn);
        Value *cv = arg(E, A, 2, "count");
        check_args(E, A, 3);
        int64_t left = cv ? val_to_int(E, cv, loc, "count") : -1;
        size_t m = strlen(o);
        TsBuf b = {0};
        const char *p = self;
        while (*p) {
            if (left != 0 && m && !strncmp(p, o, m)) {
                ts_buf_puts(&b, w);
                p += m;
                left--;
            } else {
                ts_buf_printf(&b, "%c", *p++);
            }
        }
        Value *r = val_str(E, ts_strndup(E->a, ts_buf_str(&b), b.n), loc);
        ts_buf_free(&b);
        return r;
    }
    if (!strcmp(name, "split")) {
        Value *sv = arg(E, A, 0, "sep");
        check_args(E, A, 1);
        const char *sep = sv && sv->kind != V_NONE ? str_of(E, sv, loc, A->fn) : NULL;
        if (sep && !*sep) elab_fail(E, TS_ERR_TYPE, loc, "%s: empty separator", A->fn);
        TS_VEC(Value *) parts = {0};
        const char *p = self;
        if (!sep) {
            for (;;) {
                while (*p && in_chars(*p, NULL)) p++;
                if (!*p) break;
                const char *q = p;
                while (*q && !in_chars(*q, NULL)) q++;
                ts_vec_push(E->a, parts, val_str(E, ts_strndup(E->a, p, (size_t)(q - p)), loc));
                p = q;
            }
        } else {
            size_t m = strlen(sep);
            for (;;) {
                const char *q = strstr(p, sep);
                size_t len = q ? (size_t)(q - p) : strlen(p);
                ts_vec_push(E->a, parts, val_str(E, ts_strndup(E->a, p, len), loc));
                if (!q) break;
                p = q + m;
            }
        }
        return val_seq(E, V_LIST, parts.v, parts.n, loc);
    }
    if (!strcmp(name, "join")) {
        Value *it = req(E, A, 0, "iterable");
        check_args(E, A, 1);
        int m;
        Value **items = val_items(E, it, &m);
        if (it->kind == V_STR) { /* a str is its characters */
            m = 0;
            items = NULL;
            size_t len = strlen(it->s);
            TsBuf b = {0};
            for (size_t i = 0; i < len; i++) {
                if (i) ts_buf_puts(&b, self);
                ts_buf_printf(&b, "%c", it->s[i]);
            }
            Value *r = val_str(E, ts_strndup(E->a, ts_buf_str(&b), b.n), loc);
            ts_buf_free(&b);
            return r;
        }
        if (it->kind != V_TUPLE && it->kind != V_LIST)
            elab_fail(E, TS_ERR_TYPE, loc, "%s needs a list, tuple or str of strings, got %s", A->fn, val_kind_name(it));
        const char **parts = TS_NEWN(E->a, const char *, m ? m : 1);
        size_t total = 1;
        for (int i = 0; i < m; i++) { /* (str_of may fail: nothing allocated outside the arena yet) */
            parts[i] = str_of(E, items[i], loc, A->fn);
            total += strlen(parts[i]) + (i ? n : 0);
        }
        char *r = ts_alloc(E->a, total), *w = r;
        for (int i = 0; i < m; i++) {
            if (i) w = (char *)memcpy(w, self, n) + n;
            size_t len = strlen(parts[i]);
            w = (char *)memcpy(w, parts[i], len) + len;
        }
        *w = 0;
        return val_str(E, r, loc);
    }
    elab_fail(E, TS_ERR_UNSUPPORTED, loc, "str.%s() is not supported", name);
}

/* list.append(x), .extend(items), .pop([i]): the list changes in
 * place (every name bound to it sees the change, as in Python). */
static Value *list_method(Elab *E, Value *self, const char *name, Args *A) {
    TsLoc loc = A->loc;
    if (!strcmp(name, "append") || !strcmp(name, "extend")) {
        Value *x = req(E, A, 0, name);
        check_args(E, A, 1);
        int nx = 1;
        Value **xs = &x;
        if (!strcmp(name, "extend")) xs = val_items(E, x, &nx);
        Value **items = TS_NEWN(E->a, Value *, self->n + nx + 1);
        for (int i = 0; i < self->n; i++) items[i] = self->items[i];
        for (int i = 0; i < nx; i++) items[self->n + i] = xs[i];
        self->items = items;
        self->n += nx;
        return val_new(E, V_NONE, loc);
    }
    if (!strcmp(name, "pop")) {
        Value *iv = arg(E, A, 0, "index");
        check_args(E, A, 1);
        int64_t i = iv && iv->kind != V_NONE ? val_to_int(E, iv, loc, "the index") : -1;
        if (i < 0) i += self->n;
        if (i < 0 || i >= self->n) elab_fail(E, TS_ERR_TYPE, loc, "%s: pop index out of range", A->fn);
        Value *r = self->items[i];
        for (int64_t j = i; j + 1 < self->n; j++) self->items[j] = self->items[j + 1];
        self->n--;
        return r;
    }
    elab_fail(E, TS_ERR_INTERNAL, loc, "%s: not a list method", A->fn);
}


/* The methods of a T.GemmWarpPolicy value that TileLang's host code calls
 * (tilelang/tileop/base.py, the Python enum the examples import from
 * tilelang.tileop.base): is_square/is_full_row/is_full_col, and
 * compute_warp_partition(M, N, num_warps) -> (m_warp, n_warp), the split
 * of a block's warps over a GEMM tile, computed as TileLang's Python does
 * (each warp at least 16 rows and 8 columns; FullRow/FullCol give every
 * warp to one side unless that side's size is not a multiple of 16 (8)
 * per warp, then as many as fit and the rest to the other side; Square the
 * split m * n == num_warps whose per-warp tile ratio is nearest the tile's,
 * the first found on a tie).  Where TileLang's divides by zero (FullRow
 * with M < 16, FullCol with N < 8) or gets a non-positive size, an error. */
static Value *warp_policy_method(Elab *E, Value *self, const char *name, Args *A) {
    TsLoc loc = A->loc;
    const char *pol = self->s + 15; /* after "GemmWarpPolicy." */
    A->fn = ts_sprintf(E->a, "GemmWarpPolicy.%s.%s()", pol, name);
    if (strcmp(name, "compute_warp_partition")) {
        check_args(E, A, 0);
        const char *want = !strcmp(name, "is_square") ? "Square" : !strcmp(name, "is_full_row") ? "FullRow" : "FullCol";
        return val_bool(E, !strcmp(pol, want), loc);
    }
    int64_t M = val_to_int(E, req(E, A, 0, "M"), loc, "M");
    int64_t N = val_to_int(E, req(E, A, 1, "N"), loc, "N");
    int64_t nw = val_to_int(E, req(E, A, 2, "num_warps"), loc, "num_warps");
    check_args(E, A, 3);
    if (M < 1 || N < 1 || nw < 1 || M > ((int64_t)1 << 40) || N > ((int64_t)1 << 40) || nw > (1 << 20))
        elab_fail(E, TS_ERR_PARAM, loc, "%s: M = %lld, N = %lld, num_warps = %lld; each must be positive (and not huge)",
                  A->fn, (long long)M, (long long)N, (long long)nw);
    int64_t m = 1, n = 1;
    if (!strcmp(pol, "FullRow")) {
        m = nw;
        if (M % (m * 16) != 0) {
            m = M / 16;
            if (!m)
                elab_fail(E, TS_ERR_PARAM, loc, "%s: M = %lld is under 16 rows, so no warp fits along M (TileLang's "
                          "divides by zero here)", A->fn, (long long)M);
            n = nw / m ? nw / m : 1;
        }
    } else if (!strcmp(pol, "FullCol")) {
        n = nw;
        if (N % (n * 8) != 0) {
            n = N / 8;
            if (!n)
                elab_fail(E, TS_ERR_PARAM, loc, "%s: N = %lld is under 8 columns, so no warp fits along N (TileLang's "
                          "divides by zero here)", A->fn, (long long)N);
            m = nw / n ? nw / n : 1;
        }
    } else { /* Square */
        int64_t max_m = M / 16, max_n = N / 8;
        double ideal = (double)M / (double)N, best = INFINITY;
        for (int64_t i = 1; i <= (max_m < nw ? max_m : nw); i++) {
            int64_t j = nw / i;
            if (j > max_n || i * j != nw) continue;
            double bal = fabs(((double)M / (double)(i * 16)) / ((double)N / (double)(j * 8)) - ideal);
            if (bal < best) {
                best = bal;
                m = i;
                n = j;
            }
        }
    }
    Value **items = TS_NEWN(E->a, Value *, 2);
    items[0] = val_int(E, m, loc);
    items[1] = val_int(E, n, loc);
    return val_seq(E, V_TUPLE, items, 2, loc);
}

static Value *call_method(Elab *E, Value *self, const char *name, Args *A) {
    TsLoc loc = A->loc;
    A->fn = ts_sprintf(E->a, "%s.%s()", val_kind_name(self), name);
    if (self->kind == V_LIST) return list_method(E, self, name, A);
    if (self->kind == V_ENUM) return warp_policy_method(E, self, name, A);
    if (!strcmp(name, "astype")) { /* x.astype(dtype): a cast */
        TsDType dt = val_to_dtype(E, req(E, A, 0, "dtype"), loc);
        check_args(E, A, 1);
        return cast_to(E, self, dt, loc);
    }
    if (!strcmp(name, "bit_length")) {
        check_args(E, A, 0);
        int64_t v = self->kind == V_BOOL ? self->b : self->i;
        uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        int bits = 0;
        while (u) {
            bits++;
            u >>= 1;
        }
        return val_int(E, bits, loc);
    }
    if (!strcmp(name, "is_integer")) {
        check_args(E, A, 0);
        return val_bool(E, isfinite(self->f) && floor(self->f) == self->f, loc);
    }
    return str_method(E, str_of(E, self, loc, A->fn), name, A);
}

/* isinstance(x, t): t one of int, float, bool, str, tuple, list (or a tuple of
 * them), or torch.Tensor (true of a tensor parameter, false of a compile-time
 * value). */
static bool is_instance(Elab *E, Value *x, Value *t, TsLoc loc) {
    if (t->kind == V_TUPLE) {
        for (int i = 0; i < t->n; i++)
            if (is_instance(E, x, t->items[i], loc)) return true;
        return false;
    }
    if (t->kind == V_MODULE && (!strcmp(t->s, "torch.Tensor") || !strcmp(t->s, "T.Tensor")))
        return x->kind == V_BUFFER;
    if (t->kind == V_BUILTIN) {
        switch (t->bi) {
        case B_INT: return x->kind == V_INT || x->kind == V_BOOL;
        case B_FLOAT: return x->kind == V_FLOAT;
        case B_BOOL: return x->kind == V_BOOL;
        case B_STR: return x->kind == V_STR || x->kind == V_DTYPE;
        case B_TUPLE: return x->kind == V_TUPLE;
        case B_LIST: return x->kind == V_LIST;
        default: break;
        }
    }
    elab_fail(E, TS_ERR_UNSUPPORTED, loc, "isinstance() with this type (a %s) is outside what this compiler understands",
              val_kind_name(t));
}


/* get_num_sms() on the C target, which has no GPU: the count of the CUDA
 * target's default architecture (sm_90: 132), a fixed documented value
 * rather than the host's CPU count, so that a factory sizing a persistent
 * grid by it makes the same kernel on both targets on every machine
 * (TileScale's example_allgather_gemm_overlapped; such grids stay correct
 * for any count). */
enum { TS_C_TARGET_SM = 90 };

/* On the C target: sm_90's count, so a factory picks the same grid on both targets. */
int64_t elab_num_sms(Elab *E) { return sm_count(E->caps && E->caps->sm ? E->caps->sm : TS_C_TARGET_SM); }

/* The target's architecture as compute capability x 10 (90 for sm_90a): the
 * compile's caps on the CUDA target; none on the C target, where the host
 * queries below are an error naming them. */
static int target_sm(Elab *E, const char *what, TsLoc loc) {
    if (!E->caps || !E->caps->sm)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s() asks for the GPU; it is only answered on the CUDA target", what);
    return E->caps->sm;
}

/*
 * TVM's T.tvm_thread_allreduce(n, source, cond, dest, thread vars...,
 * dtype="handle") inside `with T.attr(T.comm_reducer(combine, [identity]),
 * "reduce_scope", ...)` (TileLang's GEMV examples): every thread of the
 * block gets in `dest` the combination of `source` over the threads that
 * differ from it only along the given thread axes (a thread whose `cond`
 * is false contributes the identity).  Written here with what the IR
 * already has: each thread stores its value in a shared scratch of one
 * slot per thread, a barrier, each thread folds the slots of its group in
 * order of the reduced axes (the same order, so the same result, in every
 * thread of a group), a barrier before the scratch can be written again.
 * On the C target (no threads of its own) thread_loops_c runs the two
 * halves one after the other over the block's threads.  One value (n = 1).
 */
static Value *thread_allreduce(Elab *E, Args *A) {
    TsLoc loc = A->loc;
    need_kernel(E, A);
    ignore_kw(A, "dtype");
    check_args(E, A, 16);
    if (!E->allreduce)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                  "%s outside `with T.attr(T.comm_reducer(...), \"reduce_scope\", ...)`: the combine is unknown", A->fn);
    if (A->n < 5) elab_fail(E, TS_ERR_TYPE, loc, "%s takes (1, source, cond, dest, thread vars...)", A->fn);
    int64_t nv = val_to_int(E, A->v[0], loc, "the number of values");
    if (nv != 1) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s of %lld values: one value is supported", A->fn, (long long)nv);
    IrExpr *src = val_to_expr(E, A->v[1], loc);
    IrExpr *cond = val_to_expr(E, A->v[2], loc);
    Value *dst = A->v[3];
    if (dst->kind != V_ACCESS)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: the destination must be a buffer element, got %s", A->fn, val_kind_name(dst));
    bool reduced[3] = {false, false, false};
    for (int i = 4; i < A->n; i++) {
        IrExpr *t = val_to_expr(E, A->v[i], loc);
        if (t->kind != IR_E_VAR || t->var->kind != IR_VAR_THREAD_IDX)
            elab_fail(E, TS_ERR_TYPE, A->v[i]->loc, "%s: argument %d must be a thread index (T.get_thread_binding)", A->fn,
                      i + 1);
        reduced[t->var->axis] = true;
    }
    const int *T3 = E->k->threads;
    int64_t nthreads = (int64_t)T3[0] * T3[1] * T3[2], group = 1;
    for (int d = 0; d < 3; d++)
        if (reduced[d]) group *= T3[d];
    TsDType dt = src->dt;
    Value *ident = E->allreduce->items[1];
    IrExpr *id = ir_cast(E->a, dt, val_to_expr(E, ident, loc));
    if (!(cond->kind == IR_E_INT && cond->ival)) src = ir_select(E->a, cond, src, id);
    /* scratch [nthreads], one slot per thread at its flat index */
    IrExpr **ext = TS_NEWN(E->a, IrExpr *, 1);
    ext[0] = ir_i32(E->a, nthreads);
    IrBuffer *red = ir_buffer(E->k, "red_buf", dt, IR_SCOPE_SHARED, 1, ext, loc);
    IrStmt *al = ir_stmt(E->a, IR_S_ALLOC, loc);
    al->alloc.buf = red;
    emit(E, al);
    IrExpr *tv[3];
    for (int d = 0; d < 3; d++) tv[d] = ir_var_ref(E->a, thread_var(E, d));
    IrExpr *flat = ir_bin(E->a, IR_ADD, tv[0],
                          ir_bin(E->a, IR_MUL, ir_i32(E->a, T3[0]),
                                 ir_bin(E->a, IR_ADD, tv[1], ir_bin(E->a, IR_MUL, ir_i32(E->a, T3[1]), tv[2]))));
    IrExpr **ix = TS_NEWN(E->a, IrExpr *, 1);
    ix[0] = flat;
    emit(E, ir_store(E->a, red, ix, 1, src));
    if (E->caps && E->caps->sm) emit(E, ir_stmt(E->a, IR_S_BARRIER, loc));
    /* acc = identity; for r in serial(group): acc = combine(acc, red[slot of the r-th thread of the group]) */
    IrExpr **one = TS_NEWN(E->a, IrExpr *, 1);
    one[0] = ir_i32(E->a, 1);
    IrBuffer *acc = ir_buffer(E->k, "red_acc", dt, IR_SCOPE_LOCAL, 1, one, loc);
    IrStmt *aa = ir_stmt(E->a, IR_S_ALLOC, loc);
    aa->alloc.buf = acc;
    emit(E, aa);
    IrExpr **z = TS_NEWN(E->a, IrExpr *, 1);
    z[0] = ir_i32(E->a, 0);
    emit(E, ir_store(E->a, acc, z, 1, id));
    IrVar *r = ir_var(E->k, "red_r", TS_INT32, IR_VAR_LOOP);
    IrExpr *rest = ir_var_ref(E->a, r), *slot = ir_i32(E->a, 0), *mul = ir_i32(E->a, 1);
    for (int d = 0; d < 3; d++) {
        IrExpr *c = tv[d];
        if (reduced[d]) {
            c = ir_bin(E->a, IR_FLOORMOD, rest, ir_i32(E->a, T3[d]));
            rest = ir_bin(E->a, IR_FLOORDIV, rest, ir_i32(E->a, T3[d]));
        }
        slot = ir_bin(E->a, IR_ADD, slot, ir_bin(E->a, IR_MUL, c, mul));
        mul = ir_bin(E->a, IR_MUL, mul, ir_i32(E->a, T3[d]));
    }
    IrExpr **si = TS_NEWN(E->a, IrExpr *, 1);
    si[0] = slot;
    Value *cargs[2] = {val_expr(E, ir_load(E->a, acc, z, 1), loc), val_expr(E, ir_load(E->a, red, si, 1), loc)};
    IrStmt *body = ir_seq(E->a), *saved = E->cur;
    E->cur = body;
    Value *cv = call_value(E, E->allreduce->items[0], cargs, 2, NULL, NULL, 0, loc);
    ir_seq_push(E->a, body, ir_store(E->a, acc, z, 1, ir_cast(E->a, dt, val_to_expr(E, cv, loc))));
    E->cur = saved;
    emit(E, ir_for(E->a, r, ir_i32(E->a, 0), ir_i32(E->a, group), IR_FOR_SERIAL, body));
    if (E->caps && E->caps->sm) emit(E, ir_stmt(E->a, IR_S_BARRIER, loc));
    emit(E, ir_store(E->a, dst->buf, dst->idx, dst->buf->ndim, ir_cast(E->a, dst->buf->dt, ir_load(E->a, acc, z, 1))));
    return val_none(E, loc);
}

/* torch.cuda.* and tilelang.carver queries a factory makes at compile time:
 * answered from the architecture the kernel is compiled for (a factory picks
 * its configuration by them), or, for torch's host-side effects
 * (synchronize, seeds, empty_cache), nothing: they do not change the kernel. */
static Value *host_call(Elab *E, int id, const char *what, Value **args, int nargs, int nkw, TsLoc loc) {
    switch (id) {
    case B_TVM_DTYPE:
    case B_TVM_DTYPE2:
    case B_TVM_DTYPE3: { /* tvm.DataType("float16"): the dtype */
        if (nargs != 1 || nkw) elab_fail(E, TS_ERR_TYPE, loc, "%s() takes one dtype", what);
        Value *v = val_new(E, V_DTYPE, loc);
        v->dt = val_to_dtype(E, args[0], loc);
        return v;
    }
    case B_CUDA_CAPABILITY: {
        int sm = target_sm(E, what, loc);
        Value **items = TS_NEWN(E->a, Value *, 2);
        items[0] = val_int(E, sm / 10, loc);
        items[1] = val_int(E, sm % 10, loc);
        return val_seq(E, V_TUPLE, items, 2, loc);
    }
    case B_CUDA_AVAILABLE: return val_bool(E, E->caps && E->caps->sm, loc);
    case B_CUDA_COUNT: return val_int(E, E->caps && E->caps->sm ? 1 : 0, loc);
    case B_CUDA_CURRENT: target_sm(E, what, loc); return val_int(E, 0, loc);
    case B_CUDA_NAME: target_sm(E, what, loc); return val_str(E, ts_sprintf(E->a, "NVIDIA GPU (%s)", E->caps->arch), loc);
    case B_NUM_SMS: return val_int(E, elab_num_sms(E), loc);
    case B_CUDA_PROPS: { /* an object whose attributes builtin_attr answers (device_props) */
        target_sm(E, what, loc);
        return module_value(E, "torch.cuda.device_properties", loc);
    }
    case B_FP8_TYPE: { /* TileLang's choice on CUDA (tilelang/language/fp8.py): e4m3fn, or e5m2 */
        bool e5m2 = nargs >= 1 && args[0]->kind == V_STR && !strcmp(args[0]->s, "e5m2");
        if (nargs > 1 || nkw || (nargs == 1 && (args[0]->kind != V_STR ||
                                               (strcmp(args[0]->s, "e4m3") && !e5m2))))
            elab_fail(E, TS_ERR_TYPE, loc, "%s() takes the format \"e4m3\" or \"e5m2\"", what);
        Value *v = val_new(E, V_DTYPE, loc);
        v->dt = e5m2 ? TS_FLOAT8_E5M2 : TS_FLOAT8_E4M3;
        return v;
    }
    /* TileLang's IKET instrumentation (tilelang.tools.cuda.iket: named ranges and
     * marks recorded by a profiler): no events are recorded here, the kernel is
     * the same without them; iket.range(...) is a context that does nothing */
    case B_IKET_RANGE: return val_none(E, loc);
    case B_E_FACTOR:
    case B_E_REPLICATE: {
        /* tilelang/cuda/intrinsics/sparse_layout.py: 2:4 sparsity's metadata.
         * get_e_factor(a_dtype, meta_dtype): a_dtype elements one metadata
         * element indexes, (meta bits / 4 per group) x group (4; 2 for float32);
         * get_e_replicate_factor(a_dtype): threads sharing one metadata value,
         * 1 for 8-bit operands, else 2 */
        bool ef = id == B_E_FACTOR;
        if (nargs != (ef ? 2 : 1) || nkw)
            elab_fail(E, TS_ERR_TYPE, loc, "%s() takes %s", what, ef ? "(a_dtype, meta_dtype)" : "(a_dtype)");
        int abits = ts_dtype_bits(val_to_dtype(E, args[0], loc));
        if (!ef) return val_int(E, abits <= 8 ? 1 : 2, loc);
        if (abits != 8 && abits != 16 && abits != 32)
            elab_fail(E, TS_ERR_TYPE, loc, "%s(): no 2:4 sparsity group for a %d-bit dtype", what, abits);
        return val_int(E, ts_dtype_bits(val_to_dtype(E, args[1], loc)) / 4 * (abits == 32 ? 2 : 4), loc);
    }
    default: (void)nargs; return val_none(E, loc); /* B_HOST_NOOP*, iket marks: no effect on the kernel */
    }
}

/* ---- explicit asynchronous copies (tile-ai/tilelang a35008a:
 * tilelang/language/builtin.py access_ptr, tir/op.py ptx_cp_async) ----
 *
 * T.access_ptr(base, access_type="r", *extents, offset=0, extent=None,
 * ignore_last_ndim=0) is the address of an element (base A[i, j]), of a
 * region's first element (A[a:b, c:d]) or of a buffer's first (A), with the
 * number of elements the access covers (extent; else the product of
 * *extents; else 1 for an element, the region's or the buffer's size) and
 * its access mask ("r" 1, "w" 2, "rw" 3).  offset (elements) is TileLang's
 * for one-dimensional buffers only; ignore_last_ndim zeroes the last
 * indices.  Here it is a value of the elaborator (V_PTR: buffer, indices,
 * extent, mask) that T.ptx_cp_async takes apart into its IR statement, and
 * T.call_extern into an address argument (extern_builtins.c).
 *
 * T.ptx_cp_async(dst_ptr, src_ptr, num_elems, predicate=None): each thread
 * that runs it copies num_elems consecutive elements from global memory to
 * shared memory (PTX cp.async: 4, 8 or 16 bytes; num_elems times the
 * element size).  The copy is asynchronous: complete after the thread's
 * T.ptx_wait_group for its group, or at the arrival of
 * T.cp_async_barrier_noinc on an mbarrier.  A false predicate copies
 * nothing and fills the destination with zeros.  It becomes an IR_S_VCOPY
 * with `async` set (the statement the pipelining passes make for T.copy's
 * cp.async): insert_sync keeps its shared writes in flight until the wait
 * or the arrival, the CUDA printer prints cp.async (16 bytes: .cg, else
 * .ca), the C target and the interpreters copy at once (then every wait is
 * already satisfied). */
static bool const_idx(const IrExpr *e, int64_t *c) { return e && ir_is_const_int(e, c); }

static Value *access_ptr(Elab *E, Args *A) {
    need_kernel(E, A);
    TsLoc loc = A->loc;
    Value *base = req(E, A, 0, "base"), *at = arg(E, A, 1, "access_type");
    Value *off = arg(E, A, -1, "offset"), *ext = arg(E, A, -1, "extent"), *ign = arg(E, A, -1, "ignore_last_ndim");
    for (int i = 0; i < A->nkw; i++)
        if (!A->used[i])
            elab_fail(E, TS_ERR_TYPE, loc, "%s got an unexpected keyword argument '%s'", A->fn, A->kw[i]);
    IrBuffer *b = NULL;
    IrExpr **idx = NULL, *count = NULL;
    if (base->kind == V_ACCESS) {
        b = base->buf;
        idx = TS_NEWN(E->a, IrExpr *, b->ndim > 0 ? b->ndim : 1);
        for (int d = 0; d < b->ndim; d++) idx[d] = base->idx[d];
        count = ir_i32(E->a, 1);
    } else if (base->kind == V_REGION) {
        b = base->reg.buf;
        idx = TS_NEWN(E->a, IrExpr *, b->ndim > 0 ? b->ndim : 1);
        count = ir_i32(E->a, 1);
        for (int d = 0; d < b->ndim; d++) {
            idx[d] = base->reg.start[d];
            count = ir_bin(E->a, IR_MUL, count, base->reg.extent[d]);
        }
    } else if (base->kind == V_BUFFER) {
        b = base->buf;
        idx = TS_NEWN(E->a, IrExpr *, b->ndim > 0 ? b->ndim : 1);
        count = ir_i32(E->a, 1);
        for (int d = 0; d < b->ndim; d++) {
            idx[d] = ir_i32(E->a, 0);
            count = ir_bin(E->a, IR_MUL, count, b->shape[d]);
        }
    }
    if (!b || b->mbar_count)
        elab_fail(E, TS_ERR_TYPE, loc, "%s: the base must be a buffer, one of its elements or a region, got %s",
                  A->fn, b ? ts_sprintf(E->a, "the mbarriers '%s'", b->name) : val_kind_name(base));
    int64_t mask = 1;
    if (at && at->kind == V_STR) {
        mask = !strcmp(at->s, "r") ? 1 : !strcmp(at->s, "w") ? 2 : !strcmp(at->s, "rw") ? 3 : 0;
        if (!mask) elab_fail(E, TS_ERR_TYPE, loc, "%s: access_type \"%s\" must be \"r\", \"w\" or \"rw\"", A->fn, at->s);
    } else if (at && at->kind != V_NONE) {
        mask = val_to_int(E, at, loc, "access_type");
        if (mask < 1 || mask > 3) elab_fail(E, TS_ERR_TYPE, loc, "%s: access_type %lld must be 1 (read), 2 (write) or "
                                             "3 (both)", A->fn, (long long)mask);
    }
    if (ign && ign->kind != V_NONE) {
        int64_t n = val_to_int(E, ign, loc, "ignore_last_ndim");
        if (n < 0 || n > b->ndim)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: ignore_last_ndim %lld outside [0, %d]", A->fn, (long long)n, b->ndim);
        for (int d = b->ndim - (int)n; d < b->ndim; d++) idx[d] = ir_i32(E->a, 0);
    }
    if (off && off->kind != V_NONE) {
        IrExpr *o = int_expr(E, off, loc, "offset");
        int64_t c;
        if (!(const_idx(o, &c) && c == 0)) {
            if (b->ndim != 1)
                elab_fail(E, TS_ERR_TYPE, loc, "%s: offset= is for one-dimensional buffers ('%s' has %d); index the "
                          "element instead", A->fn, b->name, b->ndim);
            idx[0] = ir_bin(E->a, IR_ADD, idx[0], o);
        }
    }
    bool given = (ext && ext->kind != V_NONE) || A->n > 2; /* (a default extent is not checked below) */
    if (ext && ext->kind != V_NONE) {
        count = int_expr(E, ext, loc, "extent");
    } else if (A->n > 2) {
        Value **ev = A->v + 2;
        int ne = A->n - 2;
        if (ne == 1 && (ev[0]->kind == V_LIST || ev[0]->kind == V_TUPLE)) ev = val_items(E, ev[0], &ne);
        if (ne > b->ndim)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: %d extents for a buffer of %d dimensions", A->fn, ne, b->ndim);
        count = ir_i32(E->a, 1);
        for (int i = 0; i < ne; i++) count = ir_bin(E->a, IR_MUL, count, int_expr(E, ev[i], loc, "an extent"));
    }
    /* the covered elements [flat start, + count) must lie in the buffer,
     * where the compile-time values say so (an extent the call gives; the
     * default one, the buffer's or region's size, is TileLang's too with an
     * offset= past the first element) */
    int64_t flat = 0, total = 1, c, n;
    bool known = true;
    for (int d = 0; d < b->ndim; d++) {
        int64_t sh;
        bool ks = const_idx(b->shape[d], &sh);
        if (const_idx(idx[d], &c) && ks && (c < 0 || c >= sh))
            elab_fail(E, TS_ERR_TYPE, loc, "%s: index %lld of dimension %d is outside '%s' (extent %lld)", A->fn,
                      (long long)c, d, b->name, (long long)sh);
        if (ks && const_idx(idx[d], &c)) {
            flat = flat * sh + c;
            total *= sh;
        } else {
            known = false;
        }
    }
    if (const_idx(count, &n)) {
        if (n < 1) elab_fail(E, TS_ERR_TYPE, loc, "%s: the extent %lld must be positive", A->fn, (long long)n);
        if (given && known && flat + n > total)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: the %lld elements from element %lld run past the end of '%s' (%lld "
                      "elements)", A->fn, (long long)n, (long long)flat, b->name, (long long)total);
    }
    Value *v = val_new(E, V_PTR, loc);
    v->buf = b;
    v->idx = idx;
    v->e = count;
    v->i = mask;
    return v;
}

static Value *ptx_cp_async(Elab *E, Args *A) {
    need_kernel(E, A);
    TsLoc loc = A->loc;
    Value *dv = req(E, A, 0, "dst_access_ptr"), *sv = req(E, A, 1, "src_access_ptr");
    Value *nv = req(E, A, 2, "num_elems"), *pv = arg(E, A, 3, "predicate");
    check_args(E, A, 4);
    Value *ops[2] = {dv, sv};
    for (int i = 0; i < 2; i++) {
        if (ops[i]->kind != V_PTR)
            elab_fail(E, TS_ERR_TYPE, ops[i]->loc, "%s: the %s must be a T.access_ptr(...), got %s", A->fn,
                      i ? "source" : "destination", val_kind_name(ops[i]));
        if (!(ops[i]->i & (i ? 1 : 2)))
            elab_fail(E, TS_ERR_TYPE, ops[i]->loc, "%s: the %s's T.access_ptr must allow %s (access_type \"%s\")",
                      A->fn, i ? "source" : "destination", i ? "reading" : "writing", i ? "r" : "w");
    }
    IrBuffer *d = dv->buf, *s = sv->buf;
    if (d->scope != IR_SCOPE_SHARED || s->scope != IR_SCOPE_GLOBAL)
        elab_fail(E, TS_ERR_TYPE, loc, "%s copies from global to shared memory; got %s '%s' to %s '%s'", A->fn,
                  ir_scope_name(s->scope), s->name, ir_scope_name(d->scope), d->name);
    if (d->dt != s->dt)
        elab_fail(E, TS_ERR_TYPE, loc, "%s moves bytes: '%s' (%s) and '%s' (%s) must have one dtype", A->fn, s->name,
                  ts_dtype_name(s->dt), d->name, ts_dtype_name(d->dt));
    if (ts_dtype_bits(d->dt) < 8)
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: elements of %s are smaller than a byte", A->fn, ts_dtype_name(d->dt));
    int64_t n = val_to_int(E, nv, loc, "num_elems"), es = ts_dtype_bits(d->dt) / 8;
    if (n < 1 || !(n * es == 4 || n * es == 8 || n * es == 16))
        elab_fail(E, TS_ERR_TYPE, loc, "%s: %lld elements of %s are %lld bytes; cp.async copies 4, 8 or 16 bytes",
                  A->fn, (long long)n, ts_dtype_name(d->dt), (long long)(n * es));
    for (int i = 0; i < 2; i++) {
        IrBuffer *b = ops[i]->buf;
        int64_t c, last, at;
        if (const_idx(ops[i]->e, &c) && c < n)
            elab_fail(E, TS_ERR_TYPE, ops[i]->loc, "%s: the copy of %lld elements is longer than the %s's "
                      "T.access_ptr extent (%lld)", A->fn, (long long)n, i ? "source" : "destination", (long long)c);
        /* the copy runs along the last dimension (an IR_S_VCOPY's rule) */
        if (b->ndim >= 1 && const_idx(b->shape[b->ndim - 1], &last)) {
            if (last < n)
                elab_fail(E, TS_ERR_UNSUPPORTED, ops[i]->loc, "%s: the %lld elements would span rows of '%s' (its "
                          "last dimension has %lld); copies run along one row", A->fn, (long long)n, b->name,
                          (long long)last);
            if (const_idx(ops[i]->idx[b->ndim - 1], &at) && at + n > last)
                elab_fail(E, TS_ERR_TYPE, ops[i]->loc, "%s: elements %lld .. %lld of the last dimension of '%s' run "
                          "past its extent %lld", A->fn, (long long)at, (long long)(at + n - 1), b->name,
                          (long long)last);
        }
    }
    IrStmt *st = ir_stmt(E->a, IR_S_VCOPY, loc);
    st->vcopy.dst = d;
    st->vcopy.src = s;
    st->vcopy.didx = dv->idx;
    st->vcopy.ndi = d->ndim;
    st->vcopy.sidx = sv->idx;
    st->vcopy.nsi = s->ndim;
    st->vcopy.lanes = (int)n;
    st->vcopy.async = 1;
    st->vcopy.user = 1;
    if (pv && pv->kind != V_NONE) {
        IrExpr *p = val_to_expr(E, pv, loc);
        int64_t c;
        if (ir_is_const_int(p, &c)) p = c ? NULL : ir_int(E->a, 0, TS_BOOL);
        else if (p->dt != TS_BOOL) p = ir_bin(E->a, IR_NE, p, ir_int(E->a, 0, p->dt));
        st->vcopy.pred = p;
    }
    emit(E, st);
    return val_none(E, loc);
}

Value *builtin_call(Elab *E, Value *f, Value **args, int nargs, const char **kw, Value **kwv,
                    int nkw, TsLoc loc) {
    if (f->kind == V_DTYPE) {
        if (nargs != 1 || nkw)
            elab_fail(E, TS_ERR_TYPE, loc, "T.%s(x) takes one value", ts_dtype_name(f->dt));
        return cast_to(E, args[0], f->dt, loc);
    }
    if (f->kind == V_MODULE) {
        if (!strncmp(f->s, "tilelang.layout", 15)) {
            /* tilelang.layout.make_*swizzled_layout(buf): the CUDA target's
             * swizzle for the tile (T.annotate_layout); others: a layout
             * object this compiler does not read */
            const char *dot = strrchr(f->s, '.');
            const char *fn = dot ? dot + 1 : f->s;
            Value *v = val_new(E, V_ENUM, loc);
            v->s = !strcmp(fn, "make_swizzled_layout") || !strcmp(fn, "make_full_bank_swizzled_layout") ||
                           !strcmp(fn, "make_half_bank_swizzled_layout") ||
                           !strcmp(fn, "make_quarter_bank_swizzled_layout")
                       ? "layout:swizzled"
                       : "layout";
            return v;
        }
        size_t fl = strlen(f->s);
        if (!strncmp(f->s, "tilelang.", 9) && fl > 24 && !strcmp(f->s + fl - 24, ".make_mma_swizzle_layout")) {
            /* TileLang's mma swizzle of a shared tile (tilelang/cuda/intrinsics/layout): 16-byte chunks
             * XORed by row, where a row is a multiple of 64 bytes, else the identity; what the CUDA
             * target's own swizzle of the tile does (T.annotate_layout) */
            if (nargs < 1) elab_fail(E, TS_ERR_TYPE, loc, "%s() takes the shared buffer", f->s);
            IrBuffer *b = val_to_buffer(E, args[0], loc, "make_mma_swizzle_layout's buffer");
            int64_t last = 0;
            bool smooth = false;
            for (int i = 0; i < nkw; i++)
                if (!strcmp(kw[i], "is_smooth")) smooth = val_truthy(E, kwv[i], loc);
            if (nargs > 1) smooth = val_truthy(E, args[1], loc);
            Value *v = val_new(E, V_ENUM, loc);
            v->s = !smooth && b->ndim >= 1 && ir_is_const_int(b->shape[b->ndim - 1], &last) &&
                           last * ts_dtype_bits(b->dt) % 512 == 0
                       ? "layout:swizzled"
                       : "layout";
            return v;
        }
        Value *h = lookup_ns(E, NS_HOST, f->s, loc);
        if (h) return host_call(E, h->bi, f->s, args, nargs, nkw, loc);
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "calling '%s' is outside what this compiler understands", f->s);
    }
    if (f->kind != V_BUILTIN) elab_fail(E, TS_ERR_TYPE, loc, "a %s is not callable", val_kind_name(f));
    int id = f->bi;
    if (id >= ELAB_SCHED_BASE && id < ELAB_EXT_BASE) return sched_builtin_call(E, f, args, nargs, kw, kwv, nkw, loc);
    if (id >= ELAB_BAR_BASE && id < B_INTRINSIC_BASE) return bar_builtin_call(E, id, args, nargs, kw, kwv, nkw, loc);
    if (id >= ELAB_EXT_BASE && id < ELAB_COMM_BASE) return ext_builtin_call(E, id, args, nargs, kw, kwv, nkw, loc);
    if (id >= ELAB_COMM_BASE && id < B_INTRINSIC_BASE) return comm_builtin_call(E, id, args, nargs, kw, kwv, nkw, loc);
    Args A0 = {args, nargs, kw, kwv, nkw, TS_NEWN(E->a, bool, nkw ? nkw : 1), loc, NULL}, *A = &A0;
    A->fn = ts_sprintf(E->a, "%s%s()", id >= B_INTRINSIC_BASE || lookup_ns(E, NS_T, builtin_name(id), loc) ? "T." : "",
                       builtin_name(id));

    if (id >= B_INTRINSIC_BASE) {
        IrIntrinsic fn = (IrIntrinsic)(id - B_INTRINSIC_BASE);
        int ar = intrinsic_arity[fn];
        if (nargs != ar || nkw) elab_fail(E, TS_ERR_TYPE, loc, "%s takes %d argument%s", A->fn, ar, ar == 1 ? "" : "s");
        IrExpr *xs[2];
        for (int i = 0; i < ar; i++) {
            xs[i] = val_to_expr(E, args[i], loc);
            if (!ts_dtype_is_float(xs[i]->dt) && fn != IR_ABS) xs[i] = ir_cast(E->a, TS_FLOAT32, xs[i]);
        }
        if (ar == 2 && xs[0]->dt != xs[1]->dt) {
            TsDType p = ir_promote(xs[0]->dt, xs[1]->dt);
            xs[0] = ir_cast(E->a, p, xs[0]);
            xs[1] = ir_cast(E->a, p, xs[1]);
        }
        IrExpr **pa = TS_NEWN(E->a, IrExpr *, ar);
        memcpy(pa, xs, sizeof(IrExpr *) * (size_t)ar);
        TsDType rdt = (fn == IR_ISINF || fn == IR_ISNAN) ? TS_BOOL : xs[0]->dt;
        return val_expr(E, ir_call(E->a, fn, pa, ar, rdt), loc);
    }

    switch (id) {
    /* ---- types and kernel structure ---- */
    case B_TENSOR:
    case B_TENSOR2: {
        Value *shape = req(E, A, 0, "shape");
        Value *dt = arg(E, A, 1, "dtype");
        Value *data = arg(E, A, 2, "data");
        ignore_kw(A, "scope");
        check_args(E, A, 3);
        if (data) { /* T.Tensor(shape, dtype, buf.data): a view of buf's storage */
            if (data->kind != V_BUFFER)
                elab_fail(E, TS_ERR_TYPE, loc, "%s: data must be a buffer's .data, got %s", A->fn, val_kind_name(data));
            need_kernel(E, A);
            return make_view(E, A, data, shape, dt);
        }
        int n;
        Value **items = val_items(E, shape, &n);
        Value *t = val_new(E, V_TENSORTY, loc);
        t->items = items;
        t->n = n;
        t->dt = dt ? val_to_dtype(E, dt, loc) : TS_FLOAT32;
        return t;
    }
    case B_CLUSTER_RANK: /* T.block_rank_in_cluster(): pass lower_cluster decides how it is computed */
        need_kernel(E, A);
        check_args(E, A, 0);
        return val_expr(E, ir_call(E->a, IR_CLUSTER_RANK, NULL, 0, TS_INT32), loc);
    case B_KERNEL:
    case B_CLUSTER_KERNEL: {
        /* T.ClusterKernel(*blocks, cluster_dims=, threads=, prelude=): T.Kernel
         * whose blocks form thread block clusters of cluster_dims (an int or
         * up to 3 extents; tilelang/language/kernel.py) */
        const char *kn = id == B_KERNEL ? "T.Kernel" : "T.ClusterKernel";
        if (!E->in_kernel) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s must be used inside a @T.prim_func", kn);
        if (nargs < 1 || nargs > 3)
            elab_fail(E, TS_ERR_TYPE, loc, "%s takes 1 to 3 grid extents, %d given", kn, nargs);
        if (E->have_kernel) start_next_kernel(E);
        IrKernel *k = E->k;
        k->ngrid = nargs;
        static const char *names[3] = {"bx", "by", "bz"};
        for (int i = 0; i < 3; i++) {
            k->grid[i] = i < nargs ? int_expr(E, args[i], loc, "a grid extent") : ir_i32(E->a, 1);
            int64_t c;
            if (i < nargs && !k->grid[i]->loc.src && ir_is_const_int(k->grid[i], &c)) {
                /* a -D value has no place of its own: the T.Kernel call is where its
                 * diagnostics point (a grid beyond CUDA's limits, driver/api.c) */
                k->grid[i] = ir_int(E->a, c, k->grid[i]->dt);
                k->grid[i]->loc = loc;
            }
            k->block_idx[i] = ir_var(k, names[i], TS_INT32, IR_VAR_BLOCK_IDX);
            k->block_idx[i]->axis = i;
        }
        Value *th = arg(E, A, -1, "threads");
        k->threads[0] = 128;
        k->threads[1] = k->threads[2] = 1;
        if (th) {
            int n;
            Value **items = val_items(E, th, &n);
            if (n < 1 || n > 3) elab_fail(E, TS_ERR_TYPE, loc, "threads= takes 1 to 3 extents");
            for (int i = 0; i < n; i++) {
                int64_t t = val_to_int(E, items[i], loc, "threads");
                if (t <= 0 || t > 1024)
                    elab_fail(E, TS_ERR_TYPE, loc, "threads must be in 1..1024, got %lld", (long long)t);
                k->threads[i] = (int)t;
            }
            int64_t total = (int64_t)k->threads[0] * k->threads[1] * k->threads[2];
            if (total > 1024 && E->caps && E->caps->sm) /* CUDA's limit (the C target runs any count) */
                elab_fail(E, TS_ERR_TYPE, loc, "T.Kernel: threads=(%d, %d, %d) is %lld threads per block, more than "
                          "CUDA's 1024", k->threads[0], k->threads[1], k->threads[2], (long long)total);
        }
        ignore_kw(A, "prelude");
        ignore_kw(A, "is_cpu");
        if (id == B_CLUSTER_KERNEL) {
            Value *cd = req(E, A, -1, "cluster_dims");
            int n;
            Value **items = val_items(E, cd, &n);
            if (n < 1 || n > 3) elab_fail(E, TS_ERR_TYPE, loc, "%s: cluster_dims takes 1 to 3 extents, %d given", kn, n);
            int64_t total = 1;
            for (int i = 0; i < 3; i++) {
                int64_t c = 1;
                if (i < n && (items[i]->kind != V_INT || (c = items[i]->i) < 1 || c > 16))
                    elab_fail(E, TS_ERR_TYPE, loc, "%s: cluster_dims must be compile-time integers in 1..16, got %s",
                              kn, val_text(E, items[i], true) ? val_text(E, items[i], true) : val_kind_name(items[i]));
                total *= c;
                k->cluster[i] = (int)c;
                int64_t g;
                if (ir_is_const_int(k->grid[i], &g) && g % c)
                    elab_fail(E, TS_ERR_TYPE, loc, "%s: the grid's extent %lld along %c is not a multiple of the "
                              "cluster's %lld (a cluster is a box of blocks of the grid)", kn, (long long)g, "xyz"[i],
                              (long long)c);
            }
            if (total > 8)
                elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: a cluster of %lld blocks; at most 8 (CUDA's portable "
                          "cluster size) are supported", kn, (long long)total);
            k->cluster_loc = loc;
        } else {
            ignore_kw(A, "cluster_dims"); /* (not a T.Kernel argument in TileLang; accepted as before) */
        }
        check_args(E, A, 3);
        Value *v = val_new(E, V_KERNEL, loc);
        return v;
    }
    case B_ALLOC_SHARED:
    case B_ALLOC_FRAGMENT:
    case B_ALLOC_LOCAL: {
        Value *shape = req(E, A, 0, "shape");
        TsDType dt = val_to_dtype(E, req(E, A, 1, "dtype"), loc);
        ignore_kw(A, "scope");
        check_args(E, A, 3);
        IrScope sc = id == B_ALLOC_SHARED ? IR_SCOPE_SHARED : id == B_ALLOC_FRAGMENT ? IR_SCOPE_FRAGMENT : IR_SCOPE_LOCAL;
        return make_buffer(E, A, sc, shape, dt);
    }
    case B_ALLOC_TMEM: {
        /* T.alloc_tmem(shape, dtype): Blackwell tensor memory (TileLang's
         * "shared.tmem" scope), a tile of at least 2 dims; pass lower_tmem
         * decides where it lives (doc/LANGUAGE.md "Tensor memory") */
        Value *shape = req(E, A, 0, "shape");
        TsDType dt = val_to_dtype(E, req(E, A, 1, "dtype"), loc);
        check_args(E, A, 2);
        int n = 0;
        (void)val_items(E, shape, &n);
        if (n < 2) elab_fail(E, TS_ERR_TYPE, loc, "%s: the shape must have 2 or more dimensions, got %d", A->fn, n);
        return make_buffer(E, A, IR_SCOPE_TMEM, shape, dt);
    }
    case B_ALLOC_REDUCER: {
        Value *shape = req(E, A, 0, "shape");
        TsDType dt = val_to_dtype(E, req(E, A, 1, "dtype"), loc);
        Value *opv = arg(E, A, 2, "op");
        ignore_kw(A, "replication");
        check_args(E, A, 4);
        if (opv && opv->kind != V_STR) elab_fail(E, TS_ERR_TYPE, loc, "%s: op must be a string", A->fn);
        const char *opn = opv ? opv->s : "sum";
        int k = -1;
        for (int i = 0; i < TS_COUNTOF(reducer_ops); i++)
            if (!strcmp(opn, reducer_ops[i].name)) k = i;
        if (k < 0)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: op must be sum, max, min, bitand, bitor or bitxor, got '%s'", A->fn, opn);
        if (k >= 3 && !ts_dtype_is_int(dt))
            elab_fail(E, TS_ERR_TYPE, loc, "%s: the bitwise op '%s' needs an integer dtype, got %s", A->fn, opn,
                      ts_dtype_name(dt));
        Value *v = make_buffer(E, A, IR_SCOPE_FRAGMENT, shape, dt);
        struct ElabReducer r = {v->buf, reducer_ops[k].op};
        ts_vec_push(E->a, E->reducers, r);
        return v;
    }
    case B_REDUCER_INIT:
    case B_REDUCER_UPDATE:
    case B_FINALIZE_REDUCER: {
        need_kernel(E, A);
        Value *rv = req(E, A, 0, id == B_REDUCER_UPDATE ? "target" : "reducer");
        IrBuffer *rb = rv->kind == V_ACCESS ? rv->buf : rv->kind == V_BUFFER ? rv->buf : NULL;
        int ri = rb ? reducer_of(E, rb) : -1;
        if (ri < 0)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: '%s' is not a buffer made by T.alloc_reducer", A->fn,
                      rb ? rb->name : val_kind_name(rv));
        IrBinOp op = E->reducers.v[ri].op;
        if (id == B_REDUCER_UPDATE) { /* r[idx] = combine(r[idx], value) */
            Value *val = req(E, A, 1, "value");
            check_args(E, A, 2);
            if (rv->kind != V_ACCESS)
                elab_fail(E, TS_ERR_TYPE, loc, "%s: the target must be one element, reducer[indices]", A->fn);
            IrExpr *x = val_to_expr(E, val, loc);
            IrExpr *cur = ir_load(E->a, rb, rv->idx, rb->ndim);
            emit(E, ir_store(E->a, rb, rv->idx, rb->ndim, ir_cast(E->a, rb->dt, ir_bin(E->a, op, cur, ir_cast(E->a, rb->dt, x)))));
            return val_none(E, loc);
        }
        if (rv->kind != V_BUFFER) elab_fail(E, TS_ERR_TYPE, loc, "%s: give the whole reducer", A->fn);
        if (id == B_REDUCER_INIT) { /* the identity, combined with init once: init itself */
            Value *init = arg(E, A, 1, "init");
            check_args(E, A, 2);
            IrStmt *s = tileop(E, TS_OP_FILL, loc);
            s->op->r[0] = ir_region_full(E->a, rb);
            s->op->nr = 1;
            s->op->value = init ? ir_cast(E->a, rb->dt, val_to_expr(E, init, loc)) : reducer_identity(E, op, rb->dt);
            emit(E, s);
            return val_none(E, loc);
        }
        Value *dst = arg(E, A, 1, "dst");
        ignore_kw(A, "batch");
        ignore_kw(A, "annotations");
        check_args(E, A, 3);
        if (dst && dst->kind != V_NONE) { /* v2: the result into dst */
            IrStmt *s = tileop(E, TS_OP_COPY, loc);
            s->op->r[0] = ir_region_full(E->a, rb);
            s->op->r[1] = val_to_region(E, dst, loc, "T.finalize_reducer's dst");
            s->op->nr = 2;
            emit(E, s);
        }
        return val_none(E, loc);
    }
    case B_IM2COL:
    case B_IM2COL2:
        need_kernel(E, A);
        im2col(E, A);
        return val_none(E, loc);
    case B_GEMM_SP:
        need_kernel(E, A);
        gemm_sp(E, A);
        return val_none(E, loc);
    case B_RNG_INIT:
        need_kernel(E, A);
        rng_init(E, A);
        return val_none(E, loc);
    case B_RNG_RAND:
        need_kernel(E, A);
        check_args(E, A, 0);
        return val_expr(E, rng_draw(E, A), loc);
    case B_RNG_RAND_FLOAT: {
        need_kernel(E, A);
        Value *bitv = arg(E, A, 0, "bit"), *distv = arg(E, A, 1, "dist");
        check_args(E, A, 2);
        int64_t bits = bitv ? val_to_int(E, bitv, loc, "bit") : 32;
        const char *dist = distv && distv->kind == V_STR ? distv->s : "uniform";
        if (bits != 32 || strcmp(dist, "uniform"))
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: only bit=32, dist=\"uniform\" is supported (got bit=%lld, dist=\"%s\")",
                      A->fn, (long long)bits, dist);
        /* curand_uniform: x * 2^-32 + 2^-33 in float32, in (0, 1] */
        IrExpr *x = ir_cast(E->a, TS_FLOAT32, rng_draw(E, A));
        IrExpr *u = ir_bin(E->a, IR_ADD, ir_bin(E->a, IR_MUL, x, ir_float(E->a, 0x1p-32, TS_FLOAT32)),
                           ir_float(E->a, 0x1p-33, TS_FLOAT32));
        return val_expr(E, u, loc);
    }
    case B_RESHAPE: {
        need_kernel(E, A);
        Value *src = req(E, A, 0, "src"), *shape = req(E, A, 1, "shape");
        check_args(E, A, 2);
        return make_view(E, A, src, shape, NULL);
    }
    case B_VIEW: {
        Value *lay = arg(E, A, 1, "layout");
        if (lay && lay->kind == V_ENUM) /* TileScale's device view (comm_builtins.c) */
            return comm_builtin_call(E, comm_builtin_lookup(E, "view", loc)->bi, args, nargs, kw, kwv, nkw, loc);
        need_kernel(E, A);
        Value *src = req(E, A, 0, "src"), *shape = arg(E, A, 1, "shape"), *dt = arg(E, A, 2, "dtype");
        check_args(E, A, 3);
        return make_view(E, A, src, shape && shape->kind != V_NONE ? shape : NULL,
                         dt && dt->kind != V_NONE ? dt : NULL);
    }
    case B_ALLOC_VAR: {
        TsDType dt = val_to_dtype(E, req(E, A, 0, "dtype"), loc);
        Value *init = arg(E, A, 1, "init");
        ignore_kw(A, "scope");
        check_args(E, A, 3);
        Value *v = make_buffer(E, A, IR_SCOPE_VAR, val_int(E, 1, loc), dt);
        if (init) {
            IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
            idx[0] = ir_i32(E->a, 0);
            IrExpr *e = val_to_expr(E, init, loc);
            emit(E, ir_store(E->a, v->buf, idx, 1, e->dt == dt ? e : ir_cast(E->a, dt, e)));
        }
        return v;
    }
    /* ---- tile operators ---- */
    case B_COPY: {
        if (comm_copy_remote(E, args, nargs, kw, kwv, nkw, loc)) return val_none(E, loc); /* dst=rank */
        need_kernel(E, A);
        Value *src = req(E, A, 0, "src"), *dst = req(E, A, 1, "dst");
        ignore_kw(A, "coalesced_width");
        ignore_kw(A, "disable_tma");
        ignore_kw(A, "eviction_policy");
        ignore_kw(A, "annotations");
        ignore_kw(A, "loop_layout");
        check_args(E, A, 2);
        IrStmt *s = tileop(E, TS_OP_COPY, loc);
        s->op->r[0] = copy_region(E, src, dst, loc, "T.copy source");
        s->op->r[1] = copy_region(E, dst, src, loc, "T.copy destination");
        s->op->nr = 2;
        copy_int4_bytes(E, s->op->r, loc);
        emit(E, s);
        return val_none(E, loc);
    }
    case B_GEMM:
    case B_GEMM2:
    case B_WGMMA_GEMM:
    case B_TCGEN05_GEMM: {
        /* T.wgmma_gemm: T.gemm's arguments and result; on sm_90a's wgmma it
         * issues without waiting (IrTileOp.wg_async) and T.wait_wgmma waits,
         * elsewhere it is T.gemm (doc/HOPPER.md).
         * T.tcgen05_gemm(A, B, C, transpose_A, transpose_B, policy,
         * clear_accum, *, mbar, use_2cta, annotations) (tilelang/language/
         * gemm_op.py at a35008a): Blackwell's tcgen05.mma, issued without
         * waiting; when it completes the hardware arrives once on `mbar`
         * (mbar=None: no arrive; TileLang's flash_attention_sm100 backward
         * examples omit it, taken as None).  C is tensor memory or a
         * fragment, A may be tensor memory (tcgen05.mma's "ts" form).  The
         * op keeps the mbarrier (tcgen05, mbar, args[0]); pass lower_tmem
         * decides how it runs.  T.gemm with a tensor-memory C and an mbar
         * is the same gemm (TileLang then waits on mbar itself: the phase
         * the arrive completes is the one its wait needs) */
        need_kernel(E, A);
        bool tc = id == B_TCGEN05_GEMM;
        IrStmt *s = tileop(E, TS_OP_GEMM, loc);
        IrTileOp *op = s->op;
        const char *fn = tc ? "T.tcgen05_gemm" : "T.gemm";
        op->r[0] = val_to_region(E, req(E, A, 0, "A"), loc, ts_sprintf(E->a, "%s operand A", fn));
        op->r[1] = val_to_region(E, req(E, A, 1, "B"), loc, ts_sprintf(E->a, "%s operand B", fn));
        op->r[2] = val_to_region(E, req(E, A, 2, "C"), loc, ts_sprintf(E->a, "%s accumulator C", fn));
        IrScope cs = op->r[2].buf->scope;
        if (cs != IR_SCOPE_FRAGMENT && cs != IR_SCOPE_LOCAL && cs != IR_SCOPE_TMEM)
            elab_fail(E, TS_ERR_TYPE, loc, "%s accumulator C ('%s') must be a fragment, local or tensor-memory buffer, "
                      "not %s memory", fn, op->r[2].buf->name, ir_scope_name(cs));
        if (op->r[1].buf->scope == IR_SCOPE_TMEM)
            elab_fail(E, TS_ERR_TYPE, loc, "%s operand B ('%s') cannot be in tensor memory (tcgen05.mma reads B from "
                      "shared memory; only A and C may be tensor memory)", fn, op->r[1].buf->name);
        if (op->r[0].buf->scope == IR_SCOPE_TMEM && cs != IR_SCOPE_TMEM)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: operand A ('%s') is in tensor memory but accumulator C ('%s') is not",
                      fn, op->r[0].buf->name, op->r[2].buf->name);
        op->nr = 3;
        op->trans_a = flag(E, A, 3, "transpose_A", false);
        op->trans_b = flag(E, A, 4, "transpose_B", false);
        Value *pol = arg(E, A, 5, "policy");
        if (pol) {
            if (pol->kind != V_ENUM || strncmp(pol->s, "GemmWarpPolicy.", 15))
                elab_fail(E, TS_ERR_TYPE, loc, "policy must be a T.GemmWarpPolicy value");
            op->policy = !strcmp(pol->s + 15, "FullRow") ? TS_GEMM_FULLROW
                       : !strcmp(pol->s + 15, "FullCol") ? TS_GEMM_FULLCOL : TS_GEMM_SQUARE;
        }
        /* clear_accum may be a run-time condition (`clear_accum=k == 0` of a
         * loop variable): then C is cleared under it before a gemm that
         * accumulates, which is what clearing first means */
        Value *clr = arg(E, A, 6, "clear_accum");
        IrExpr *clear_if = NULL;
        int64_t clr_c;
        if (clr && (clr->kind == V_ACCESS || (clr->kind == V_EXPR && !ir_is_const_int(clr->e, &clr_c)))) {
            clear_if = val_to_expr(E, clr, loc);
            if (clear_if->dt != TS_BOOL) clear_if = ir_bin(E->a, IR_NE, clear_if, ir_int(E->a, 0, clear_if->dt));
        } else {
            op->clear_accum = clr ? val_truthy(E, clr, loc) : false;
        }
        Value *mb = NULL;
        if (tc) {
            mb = arg(E, A, -1, "mbar");
            if (flag(E, A, -1, "use_2cta", false))
                elab_fail(E, TS_ERR_UNSUPPORTED, loc, "T.tcgen05_gemm(use_2cta=True): the 2-CTA form needs a cluster "
                          "of two blocks sharing the gemm (one block's MMA reading both blocks' shared memory), which is not built");
            ignore_kw(A, "annotations");
            check_args(E, A, 7);
            op->tcgen05 = 1;
        } else {
            Value *kp = arg(E, A, 7, "k_pack");
            op->k_pack = kp ? (int)val_to_int(E, kp, loc, "k_pack") : 1;
            Value *wg = arg(E, A, 8, "wg_wait");
            op->wg_wait = wg ? (int)val_to_int(E, wg, loc, "wg_wait") : 0;
            if (cs == IR_SCOPE_TMEM) {
                mb = arg(E, A, -1, "mbar");
                op->tcgen05 = 1;
            } else {
                ignore_kw(A, "mbar");
            }
            ignore_kw(A, "annotations");
            check_args(E, A, 9);
        }
        if (mb && mb->kind != V_NONE) {
            op->k_pack = 1;
            elab_barrier_of(E, fn, mb, loc, &op->mbar, &op->args[0]);
        }
        op->wg_async = id == B_WGMMA_GEMM;
        if (clear_if) { /* if cond: C = 0, then the gemm accumulates */
            IrStmt *fs = tileop(E, TS_OP_FILL, loc);
            fs->op->r[0] = op->r[2];
            fs->op->nr = 1;
            TsDType cdt = op->r[2].buf->dt;
            fs->op->value = ts_dtype_is_float(cdt) ? ir_float(E->a, 0, cdt) : ir_int(E->a, 0, cdt);
            IrStmt *iff = ir_stmt(E->a, IR_S_IF, loc);
            iff->if_.cond = clear_if;
            iff->if_.then = ir_seq(E->a);
            ir_seq_push(E->a, iff->if_.then, fs);
            emit(E, iff);
        }
        emit(E, s);
        return val_none(E, loc);
    }
    case B_GEMM_BLOCKSCALED: {
        /* T.mma_gemm_blockscaled(A, B, C, SFA, SFB, transpose_A, transpose_B,
         * policy, clear_accum, *, k_start, sf_a_granularity_k,
         * sf_b_granularity_k, sf_layout) (TileLang's SM120 NVFP4 gemm,
         * tilelang/language/gemm_op.py): float4_e2m1fn A and B, a float32
         * accumulator, uint32 words of UE4M3 scale bytes, one per 16 K
         * elements.  Run as the generic gemm loops with the scales applied
         * (op/gemm.c); no tensor-core fp4 instruction. */
        need_kernel(E, A);
        IrStmt *s = tileop(E, TS_OP_GEMM, loc);
        IrTileOp *op = s->op;
        static const char *const what[5] = {"operand A", "operand B", "accumulator C", "scales SFA", "scales SFB"};
        static const char *const names[5] = {"A", "B", "C", "SFA", "SFB"};
        for (int i = 0; i < 5; i++) {
            op->r[i] = val_to_region(E, req(E, A, i, names[i]), loc, ts_sprintf(E->a, "%s %s", A->fn, what[i]));
            TsDType want = i < 2 ? TS_FLOAT4_E2M1 : i == 2 ? TS_FLOAT32 : TS_UINT32;
            if (op->r[i].buf->dt != want)
                elab_fail(E, TS_ERR_TYPE, loc, "%s: %s ('%s') must be %s, not %s (the NVFP4 form: float4_e2m1fn "
                          "operands, a float32 accumulator, uint32 words of four UE4M3 scale bytes)",
                          A->fn, what[i], op->r[i].buf->name, ts_dtype_name(want), ts_dtype_name(op->r[i].buf->dt));
            if (op->r[i].ndim != 2)
                elab_fail(E, TS_ERR_SHAPE, loc, "%s: %s ('%s') must be 2-d, not %d-d", A->fn, what[i],
                          op->r[i].buf->name, op->r[i].ndim);
        }
        if (op->r[2].buf->scope != IR_SCOPE_FRAGMENT && op->r[2].buf->scope != IR_SCOPE_LOCAL)
            elab_fail(E, TS_ERR_TYPE, loc, "%s accumulator C ('%s') must be a fragment or local buffer, not %s memory",
                      A->fn, op->r[2].buf->name, ir_scope_name(op->r[2].buf->scope));
        op->nr = 5;
        op->trans_a = flag(E, A, 5, "transpose_A", false);
        op->trans_b = flag(E, A, 6, "transpose_B", false);
        Value *pol = arg(E, A, 7, "policy");
        if (pol && (pol->kind != V_ENUM || strncmp(pol->s, "GemmWarpPolicy.", 15)))
            elab_fail(E, TS_ERR_TYPE, loc, "policy must be a T.GemmWarpPolicy value");
        op->clear_accum = flag(E, A, 8, "clear_accum", false);
        op->k_pack = 1;
        op->args[0] = val_to_expr(E, req(E, A, -1, "k_start"), loc);
        if (!ts_dtype_is_int(op->args[0]->dt))
            elab_fail(E, TS_ERR_TYPE, loc, "%s: k_start must be an integer", A->fn);
        for (int i = 0; i < 2; i++) {
            const char *kn = i ? "sf_b_granularity_k" : "sf_a_granularity_k";
            int64_t g = val_to_int(E, req(E, A, -1, kn), loc, kn);
            if (g != 16)
                elab_fail(E, TS_ERR_TYPE, loc, "%s: %s is %lld: the NVFP4 form scales 16 K elements per byte (four "
                          "bytes to a word of 64)", A->fn, kn, (long long)g);
            op->sf_gran[i] = (int)g;
        }
        Value *lay = arg(E, A, -1, "sf_layout");
        op->sf_layout = TS_SF_ROWMAJOR;
        if (lay && lay->kind != V_NONE) {
            if (lay->kind != V_STR || (strcmp(lay->s, "rowmajor") && strcmp(lay->s, "blockscaled_chunk_kmajor")))
                elab_fail(E, TS_ERR_TYPE, loc, "%s: sf_layout must be \"rowmajor\" or \"blockscaled_chunk_kmajor\"", A->fn);
            if (!strcmp(lay->s, "blockscaled_chunk_kmajor")) op->sf_layout = TS_SF_CHUNK_KMAJOR;
        }
        check_args(E, A, 9);
        /* the scale regions' shapes, as the layouts read them */
        int64_t K = 0, M = 0, N = 0, e[2][2];
        bool k = ir_is_const_int(op->r[0].extent[op->trans_a ? 0 : 1], &K) &&
                 ir_is_const_int(op->r[2].extent[0], &M) && ir_is_const_int(op->r[2].extent[1], &N);
        for (int i = 0; i < 2; i++)
            for (int d = 0; d < 2; d++) k = k && ir_is_const_int(op->r[3 + i].extent[d], &e[i][d]);
        if (!k)
            elab_fail(E, TS_ERR_SHAPE, loc, "%s: the operands' and scales' extents must be constants", A->fn);
        for (int i = 0; i < 2; i++) {
            int64_t rows = i ? N : M;
            bool ok = op->sf_layout == TS_SF_CHUNK_KMAJOR
                          ? e[i][0] == rows && rows % 32 == 0 && K % 64 == 0 && e[i][1] == K / 64
                          : e[i][0] >= rows;
            if (!ok)
                elab_fail(E, TS_ERR_SHAPE, loc,
                          op->sf_layout == TS_SF_CHUNK_KMAJOR
                              ? "%s: with sf_layout=\"blockscaled_chunk_kmajor\" the scales %s ('%s') are a tile of "
                                "%lld rows (a multiple of 32) by K / 64 = %lld words, not %lld x %lld"
                              : "%s: the scales %s ('%s') need a row for each of the %lld rows (and a word per 64 K "
                                "from k_start; %lld words of this tile), not %lld x %lld",
                          A->fn, names[3 + i], op->r[3 + i].buf->name, (long long)rows, (long long)(K / 64),
                          (long long)e[i][0], (long long)e[i][1]);
        }
        emit(E, s);
        return val_none(E, loc);
    }
    case B_FILL:
    case B_CLEAR: {
        need_kernel(E, A);
        Value *dstv = req(E, A, 0, "buffer");
        if (dstv->kind == V_BUFFER && dstv->buf->scope == IR_SCOPE_VAR) {
            IrBuffer *vb = dstv->buf;
            Value *fv = id == B_CLEAR ? val_int(E, 0, loc) : req(E, A, 1, "value");
            check_args(E, A, id == B_CLEAR ? 1 : 2);
            IrExpr *e = val_is_const(fv) ? (ts_dtype_is_float(vb->dt) ? ir_float(E->a, fv->kind == V_FLOAT ? fv->f : (double)fv->i, vb->dt) : ir_int(E->a, fv->kind == V_FLOAT ? (int64_t)fv->f : fv->i, vb->dt)) : val_to_expr(E, fv, loc);
            IrExpr **idx = TS_NEWN(E->a, IrExpr *, 1);
            idx[0] = ir_i32(E->a, 0);
            emit(E, ir_store(E->a, vb, idx, 1, e->dt == vb->dt ? e : ir_cast(E->a, vb->dt, e)));
            return val_none(E, loc);
        }
        IrStmt *s = tileop(E, TS_OP_FILL, loc);
        s->op->r[0] = val_to_region(E, dstv, loc, A->fn);
        s->op->nr = 1;
        IrBuffer *b = s->op->r[0].buf;
        if (id == B_CLEAR) {
            s->op->value = ts_dtype_is_float(b->dt) ? ir_float(E->a, 0, b->dt) : ir_int(E->a, 0, b->dt);
            check_args(E, A, 1);
        } else {
            Value *v = req(E, A, 1, "value");
            check_args(E, A, 2);
            IrExpr *e = val_is_const(v) && (ts_dtype_is_float(b->dt) || ts_dtype_is_int(b->dt))
                            ? (ts_dtype_is_float(b->dt) ? ir_float(E->a, v->kind == V_FLOAT ? v->f : (double)(v->kind == V_INT ? v->i : v->b), b->dt)
                                                        : ir_int(E->a, v->kind == V_FLOAT ? (int64_t)v->f : v->kind == V_INT ? v->i : v->b, b->dt))
                            : val_to_expr(E, v, loc);
            s->op->value = e->dt == b->dt ? e : ir_cast(E->a, b->dt, e);
        }
        emit(E, s);
        return val_none(E, loc);
    }
    case B_REDUCE_MAX:
    case B_REDUCE_MIN:
    case B_REDUCE_SUM:
    case B_REDUCE_ABSSUM:
    case B_REDUCE_ABSMAX: {
        need_kernel(E, A);
        IrStmt *s = tileop(E, TS_OP_REDUCE, loc);
        IrTileOp *op = s->op;
        op->r[0] = val_to_region(E, req(E, A, 0, "buffer"), loc, "reduce source");
        op->r[1] = val_to_region(E, req(E, A, 1, "out"), loc, "reduce destination");
        op->nr = 2;
        Value *dim = arg(E, A, 2, "dim");
        op->dim = dim ? norm_dim(E, dim, op->r[0].ndim, loc, A->fn) : op->r[0].ndim - 1;
        op->clear = flag(E, A, 3, "clear", true);
        op->reduce = id == B_REDUCE_MAX ? TS_REDUCE_MAX : id == B_REDUCE_MIN ? TS_REDUCE_MIN
                   : id == B_REDUCE_SUM ? TS_REDUCE_SUM : id == B_REDUCE_ABSSUM ? TS_REDUCE_ABSSUM
                   : TS_REDUCE_ABSMAX;
        check_args(E, A, 4);
        emit(E, s);
        return val_none(E, loc);
    }
    case B_CUMSUM: {
        need_kernel(E, A);
        IrStmt *s = tileop(E, TS_OP_CUMSUM, loc);
        IrTileOp *op = s->op;
        Value *src = req(E, A, 0, "src");
        Value *dst = arg(E, A, 1, "dst");
        op->r[0] = val_to_region(E, src, loc, "T.cumsum source");
        op->r[1] = dst && dst->kind != V_NONE ? val_to_region(E, dst, loc, "T.cumsum destination") : op->r[0];
        op->nr = 2;
        Value *dim = arg(E, A, 2, "dim");
        op->dim = dim ? norm_dim(E, dim, op->r[0].ndim, loc, A->fn) : 0;
        op->reverse = flag(E, A, 3, "reverse", false);
        check_args(E, A, 4);
        emit(E, s);
        return val_none(E, loc);
    }
    case B_ATOMIC_ADD: {
        need_kernel(E, A);
        Value *dst = req(E, A, 0, "dst"), *val = req(E, A, 1, "value");
        ignore_kw(A, "memory_order");
        ignore_kw(A, "use_tma");
        bool prev = flag(E, A, -1, "return_prev", false);
        check_args(E, A, 2);
        if (prev) {
            /* T.atomic_add(elem, value, return_prev=True): the element's value
             * before the add, as TileScale's T.atom_add gives it (CUDA's
             * atomicAdd; topk_selector's slot counters in shared memory) */
            if (dst->kind != V_ACCESS)
                elab_fail(E, TS_ERR_TYPE, loc, "%s: return_prev=True takes one buffer element, got %s", A->fn,
                          val_kind_name(dst));
            Value *av[2] = {dst, val};
            Value *fn = comm_builtin_lookup(E, "atom_add", loc);
            return comm_builtin_call(E, fn->bi, av, 2, NULL, NULL, 0, loc);
        }
        IrStmt *s = tileop(E, TS_OP_ATOMIC_ADD, loc);
        IrTileOp *op = s->op;
        /* a scalar value: a number, an expression, an element, or an alloc_var */
        bool scalar = val_is_const(val) || val->kind == V_EXPR || val->kind == V_ACCESS ||
                      (val->kind == V_BUFFER && val->buf->scope == IR_SCOPE_VAR);
        if (dst->kind == V_ACCESS && scalar) {
            op->r[0] = val_to_region(E, dst, loc, "T.atomic_add destination");
            op->nr = 1;
            IrExpr *e = val_is_const(val) ? val_to_expr(E, val, loc) : val_to_expr(E, val, loc);
            op->value = e->dt == dst->buf->dt ? e : ir_cast(E->a, dst->buf->dt, e);
        } else {
            op->r[0] = copy_region(E, dst, val, loc, "T.atomic_add destination");
            op->r[1] = copy_region(E, val, dst, loc, "T.atomic_add source");
            op->nr = 2;
        }
        emit(E, s);
        return val_none(E, loc);
    }
    case B_ATOMIC_ADDX2:
    case B_ATOMIC_ADDX4: {
        /* T.atomic_addx4(dst[..., j], src[..., k]): dst[..., j + i] += src[..., k + i]
         * for i < 4 (x2: 2), each an element atomic add (TileLang issues one vector
         * atomic; a sum does not depend on the grouping) */
        need_kernel(E, A);
        Value *dst = req(E, A, 0, "dst"), *val = req(E, A, 1, "value");
        ignore_kw(A, "return_prev");
        ignore_kw(A, "memory_order");
        check_args(E, A, 2);
        if (dst->kind != V_ACCESS || val->kind != V_ACCESS)
            elab_fail(E, TS_ERR_TYPE, loc, "%s takes two buffer elements (the first of each vector)", A->fn);
        int lanes = id == B_ATOMIC_ADDX4 ? 4 : 2;
        for (int i = 0; i < lanes; i++) {
            Value *d = val_new(E, V_ACCESS, loc), *v = val_new(E, V_ACCESS, loc);
            *d = *dst;
            *v = *val;
            d->idx = TS_NEWN(E->a, IrExpr *, dst->buf->ndim);
            v->idx = TS_NEWN(E->a, IrExpr *, val->buf->ndim);
            memcpy(d->idx, dst->idx, sizeof(IrExpr *) * (size_t)dst->buf->ndim);
            memcpy(v->idx, val->idx, sizeof(IrExpr *) * (size_t)val->buf->ndim);
            int dl = dst->buf->ndim - 1, vl = val->buf->ndim - 1;
            if (i) {
                d->idx[dl] = ir_bin(E->a, IR_ADD, d->idx[dl], ir_i32(E->a, i));
                v->idx[vl] = ir_bin(E->a, IR_ADD, v->idx[vl], ir_i32(E->a, i));
            }
            IrStmt *st = tileop(E, TS_OP_ATOMIC_ADD, loc);
            st->op->r[0] = val_to_region(E, d, loc, "the destination");
            st->op->nr = 1;
            IrExpr *e = val_to_expr(E, v, loc);
            st->op->value = e->dt == dst->buf->dt ? e : ir_cast(E->a, dst->buf->dt, e);
            emit(E, st);
        }
        return val_none(E, loc);
    }
    /* ---- loops ---- */
    case B_PARALLEL: return make_iter(E, A, IR_FOR_PARALLEL);
    case B_PIPELINED: return make_iter(E, A, IR_FOR_PIPELINED);
    case B_SERIAL:
    case B_SERIAL2: return make_iter(E, A, IR_FOR_SERIAL);
    case B_UNROLL: ignore_kw(A, "explicit"); ignore_kw(A, "unroll_factor"); return make_iter(E, A, IR_FOR_UNROLL);
    case B_VECTORIZED: return make_iter(E, A, IR_FOR_VECTORIZED);
    case B_RANGE: {
        bool all_const = true;
        for (int i = 0; i < nargs; i++) all_const &= args[i]->kind == V_INT || args[i]->kind == V_BOOL;
        Value *v = make_iter(E, A, IR_FOR_SERIAL);
        if (!E->in_kernel || !E->cur) {
            if (!all_const) elab_fail(E, TS_ERR_TYPE, loc, "range() outside a kernel needs integer constants");
            v->iter->host = true;
        }
        return v;
    }
    /* ---- arithmetic ---- */
    case B_CEILDIV:
    case B_TLCDIV: {
        Value *a = req(E, A, 0, "a"), *b = req(E, A, 1, "b");
        check_args(E, A, 2);
        if (val_is_const(a) && val_is_const(b)) {
            int64_t x = val_to_int(E, a, loc, "T.ceildiv operand"), y = val_to_int(E, b, loc, "T.ceildiv operand");
            if (y == 0) elab_fail(E, TS_ERR_TYPE, loc, "T.ceildiv by zero");
            /* -(-x // y): Python's ceiling division, no intermediate x + y - 1 to overflow */
            if (x == INT64_MIN || (y == -1 && x == INT64_MAX))
                elab_fail(E, TS_ERR_TYPE, loc, "integer overflow in T.ceildiv(%lld, %lld)", (long long)x, (long long)y);
            int64_t q = -x / y, r = -x % y;
            if (r != 0 && ((r < 0) != (y < 0))) q--;
            return val_int(E, -q, loc);
        }
        return binop(E, AST_FLOORDIV, binop(E, AST_SUB, binop(E, AST_ADD, a, b, loc), val_int(E, 1, loc), loc), b, loc);
    }
    case B_FLOORDIV: case B_FLOORMOD: case B_TRUNCDIV: case B_TRUNCMOD: {
        Value *a = req(E, A, 0, "a"), *b = req(E, A, 1, "b");
        check_args(E, A, 2);
        if (id == B_FLOORDIV || id == B_FLOORMOD) return binop(E, id == B_FLOORDIV ? AST_FLOORDIV : AST_MOD, a, b, loc);
        IrExpr *x = val_to_expr(E, a, loc), *y = val_to_expr(E, b, loc);
        if (id == B_TRUNCDIV) return val_expr(E, ir_bin(E->a, IR_DIV, x, y), loc);
        return val_expr(E, ir_bin(E->a, IR_SUB, x, ir_bin(E->a, IR_MUL, ir_bin(E->a, IR_DIV, x, y), y)), loc);
    }
    case B_NEXT_POW2: {
        int64_t x = val_to_int(E, req(E, A, 0, "x"), loc, "next_power_of_2's argument");
        check_args(E, A, 1);
        if (x > ((int64_t)1 << 62))
            elab_fail(E, TS_ERR_TYPE, loc, "next_power_of_2(%lld) does not fit in 64 bits", (long long)x);
        int64_t p = 1;
        while (p < x) p <<= 1;
        return val_int(E, p, loc);
    }
    case B_MGCD: {
        int64_t x = val_to_int(E, req(E, A, 0, "a"), loc, "gcd's argument");
        int64_t y = val_to_int(E, req(E, A, 1, "b"), loc, "gcd's argument");
        check_args(E, A, 2);
        uint64_t ux = x < 0 ? 0 - (uint64_t)x : (uint64_t)x, uy = y < 0 ? 0 - (uint64_t)y : (uint64_t)y;
        while (uy) { uint64_t t = ux % uy; ux = uy; uy = t; }
        if (ux > INT64_MAX) elab_fail(E, TS_ERR_TYPE, loc, "gcd(%lld, %lld) does not fit in 64 bits", (long long)x, (long long)y);
        return val_int(E, (int64_t)ux, loc);
    }
    case B_CLAMP: {
        /* T.clamp(x, lo, hi) = min(max(x, lo), hi) */
        Value *x = req(E, A, 0, "x"), *lo = req(E, A, 1, "min_val"), *hi = req(E, A, 2, "max_val");
        check_args(E, A, 3);
        Value *two[2] = {x, lo};
        Args B = *A;
        B.v = two;
        B.n = 2;
        B.nkw = 0;
        two[0] = minmax(E, &B, true);
        two[1] = hi;
        return minmax(E, &B, false);
    }
    case B_TMAX: case B_PYMAX: return minmax(E, A, true);
    case B_TMIN: case B_PYMIN: return minmax(E, A, false);
    case B_TIR_SELECT: /* tvm's tir.Select(cond, a, b) */
    case B_IF_THEN_ELSE: {
        Value *c = req(E, A, 0, "cond"), *t = req(E, A, 1, "then"), *e = req(E, A, 2, "else");
        check_args(E, A, 3);
        if (!(c->kind == V_EXPR || c->kind == V_ACCESS)) return val_truthy(E, c, loc) ? t : e;
        IrExpr *te, *ee;
        if (val_is_const(t) && !val_is_const(e)) {
            ee = val_to_expr(E, e, loc);
            te = ir_cast(E->a, ee->dt, val_to_expr(E, t, loc));
        } else if (!val_is_const(t) && val_is_const(e)) {
            te = val_to_expr(E, t, loc);
            ee = ir_cast(E->a, te->dt, val_to_expr(E, e, loc));
        } else {
            te = val_to_expr(E, t, loc);
            ee = val_to_expr(E, e, loc);
        }
        return val_expr(E, ir_select(E->a, val_to_expr(E, c, loc), te, ee), loc);
    }
    case B_CAST: {
        Value *v = req(E, A, 0, "value");
        TsDType dt = val_to_dtype(E, req(E, A, 1, "dtype"), loc);
        check_args(E, A, 2);
        return cast_to(E, v, dt, loc);
    }
    case B_REINTERPRET:     /* T.reinterpret(value, dtype) */
    case B_TIR_REINTERPRET: { /* tvm's tir.reinterpret(dtype, value) */
        bool tvm = id == B_TIR_REINTERPRET;
        Value *v = req(E, A, tvm ? 1 : 0, "value"), *dv = req(E, A, tvm ? 0 : 1, "dtype");
        check_args(E, A, 2);
        if (dv->kind == V_STR && !strcmp(dv->s, "handle")) /* TVM's null handle of a T.attr: no value here */
            return val_none(E, loc);
        TsDType dt = val_to_dtype(E, dv, loc);
        IrExpr *x = val_to_expr(E, v, loc);
        if (dt == TS_BOOL || x->dt == TS_BOOL || ts_dtype_bits(dt) != ts_dtype_bits(x->dt))
            elab_fail(E, TS_ERR_TYPE, loc, "%s: %s (%d bits) read as %s (%d bits): the bits can only be read as a "
                      "dtype of the same width, neither of them bool", A->fn, ts_dtype_name(x->dt),
                      ts_dtype_bits(x->dt), ts_dtype_name(dt), ts_dtype_bits(dt));
        if (x->dt == dt) return val_expr(E, x, loc);
        IrExpr *r = ir_call(E->a, IR_REINTERPRET, &x, 1, dt);
        r->loc = loc;
        return val_expr(E, r, loc);
    }
    case B_TIR_CONST: { /* tvm's tir.const(value, dtype): int32 / float32 by default, as TVM */
        Value *v = req(E, A, 0, "value");
        Value *dv = arg(E, A, 1, "dtype");
        check_args(E, A, 2);
        TsDType dt = dv ? val_to_dtype(E, dv, loc) : v->kind == V_FLOAT ? TS_FLOAT32 : v->kind == V_BOOL ? TS_BOOL : TS_INT32;
        if (v->kind != V_INT && v->kind != V_FLOAT && v->kind != V_BOOL)
            elab_fail(E, TS_ERR_TYPE, loc, "%s takes a Python number, got %s", A->fn, val_kind_name(v));
        return cast_to(E, v, dt, loc);
    }
    case B_COMM_REDUCER: { /* T.comm_reducer(combine, [identity]): what T.attr's reduce_scope carries */
        Value *comb = req(E, A, 0, "combiner"), *idv = req(E, A, 1, "identity");
        ignore_kw(A, "span");
        check_args(E, A, 2);
        int n;
        Value **ids = val_items(E, idv, &n);
        if (n != 1)
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s with %d values: one value is supported", A->fn, n);
        Value *v = val_new(E, V_ENUM, loc);
        v->s = "comm_reducer";
        v->items = TS_NEWN(E->a, Value *, 2);
        v->items[0] = comb;
        v->items[1] = ids[0];
        v->n = 2;
        return v;
    }
    case B_ATTR: { /* T.attr(node, key, value): a context; only the reduce_scope of an allreduce means anything */
        Value *node = req(E, A, 0, "node"), *key = req(E, A, 1, "attr_key");
        (void)req(E, A, 2, "value");
        check_args(E, A, 3);
        if (key->kind != V_STR || strcmp(key->s, "reduce_scope") || node->kind != V_ENUM ||
            strcmp(node->s, "comm_reducer"))
            elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                      "%s: only T.attr(T.comm_reducer(...), \"reduce_scope\", ...) around T.tvm_thread_allreduce is "
                      "supported", A->fn);
        Value *v = val_new(E, V_ENUM, loc);
        v->s = "attr:reduce_scope";
        v->items = node->items;
        v->n = node->n;
        return v;
    }
    case B_ASSUME: { /* T.assume(cond) (TVM's tir.assume): a fact the program promises, for the optimizer;
                      * not used here (no pass needs it), so the kernel is the same without it */
        Value *c = req(E, A, 0, "cond");
        check_args(E, A, 1);
        if (val_is_symbolic(c) && !ts_dtype_is_int(val_to_expr(E, c, loc)->dt) && val_to_expr(E, c, loc)->dt != TS_BOOL)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: the condition must be a bool or an integer", A->fn);
        return val_none(E, loc);
    }
    case B_EVALUATE: { /* T.evaluate(x): x for its effect (T.tvm_thread_allreduce has had it: None) */
        Value *x = req(E, A, 0, "value");
        check_args(E, A, 1);
        if (x->kind == V_NONE || val_is_const(x)) return val_none(E, loc);
        IrStmt *st = ir_stmt(E->a, IR_S_EVAL, loc);
        st->eval.e = val_to_expr(E, x, loc);
        emit(E, st);
        return val_none(E, loc);
    }
    case B_THREAD_ALLREDUCE: return thread_allreduce(E, A);
    case B_TDTYPE: { /* T.dtype(x): the dtype (also an annotation's type, never called there) */
        Value *x = req(E, A, 0, "dtype");
        check_args(E, A, 1);
        Value *v = val_new(E, V_DTYPE, loc);
        v->dt = val_to_dtype(E, x, loc);
        return v;
    }
    case B_MAKE_TENSOR: {
        /* T.make_tensor(ptr, shape, dtype): a global tensor at an address
         * read at run time (TileLang's grouped GEMM by pointer tables:
         * T.Tensor([n], T.ptr) holds the addresses).  The address is bound
         * once, here, by a let (IrBuffer.addr); the tensor is row-major with
         * the constant shape given. */
        need_kernel(E, A);
        if (!E->cur) elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s must be used inside `with T.Kernel(...)`", A->fn);
        Value *p = req(E, A, 0, "ptr");
        Value *shape = req(E, A, 1, "shape");
        Value *dv = arg(E, A, 2, "dtype");
        Value *sv = arg(E, A, 3, "strides");
        check_args(E, A, 4);
        if (sv && sv->kind != V_NONE)
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: only row-major tensors are built (strides=None)", A->fn);
        TsDType dt = dv && dv->kind != V_NONE ? val_to_dtype(E, dv, loc) : TS_FLOAT32;
        IrExpr *pe = int_expr(E, p, loc, "the address");
        if (ts_dtype_bits(pe->dt) != 64)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: the address must be a 64-bit integer (an element of a T.ptr table), got %s",
                      A->fn, ts_dtype_name(pe->dt));
        int n;
        Value **items = val_items(E, shape, &n);
        if (n < 1 || n > 8) elab_fail(E, TS_ERR_TYPE, loc, "%s: a tensor has 1 to 8 dimensions, %d given", A->fn, n);
        IrExpr **ext = TS_NEWN(E->a, IrExpr *, n);
        IrExpr **st = TS_NEWN(E->a, IrExpr *, n);
        int64_t cs[8], acc = 1;
        for (int i = 0; i < n; i++) {
            cs[i] = val_to_int(E, items[i], loc, "an extent of T.make_tensor (a compile-time constant)");
            if (cs[i] <= 0 || cs[i] > ((int64_t)1 << 40))
                elab_fail(E, TS_ERR_TYPE, loc, "%s: extent %lld must be from 1 to 2^40", A->fn, (long long)cs[i]);
            ext[i] = cs[i] <= INT32_MAX ? ir_i32(E->a, cs[i]) : ir_int(E->a, cs[i], TS_INT64);
        }
        for (int i = n - 1; i >= 0; i--) {
            st[i] = ir_int(E->a, acc, TS_INT64);
            if (__builtin_mul_overflow(acc, cs[i], &acc) || acc > ((int64_t)1 << 50))
                elab_fail(E, TS_ERR_TYPE, loc, "%s: the tensor is too large", A->fn);
        }
        IrVar *var = ir_var(E->k, "ts_addr", TS_INT64, IR_VAR_LET);
        IrStmt *s = ir_stmt(E->a, IR_S_LET, loc);
        s->let.var = var;
        s->let.value = pe->dt == TS_INT64 ? pe : ir_cast(E->a, TS_INT64, pe);
        emit(E, s);
        IrBuffer *b = ir_buffer(E->k, "", dt, IR_SCOPE_GLOBAL, n, ext, loc);
        b->strides = st;
        b->addr = var;
        Value *v = val_new(E, V_BUFFER, loc);
        v->buf = b;
        return v;
    }
    case B_ALLOC_GLOBAL: { /* a workspace the launch allocates: a hidden parameter (IrBuffer.workspace) */
        Value *shape = req(E, A, 0, "shape");
        TsDType dt = val_to_dtype(E, req(E, A, 1, "dtype"), loc);
        Value *sc = arg(E, A, 2, "scope");
        check_args(E, A, 3);
        if (sc && (sc->kind != V_STR || strcmp(sc->s, "global")))
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s: only scope=\"global\" is supported", A->fn);
        if (!E->in_kernel || E->have_kernel)
            elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                      "%s must come in the prim_func before the first T.Kernel (a workspace of the whole launch)", A->fn);
        int n;
        Value **items = val_items(E, shape, &n);
        if (n < 1 || n > 8) elab_fail(E, TS_ERR_TYPE, loc, "%s: a workspace has 1 to 8 dimensions, %d given", A->fn, n);
        IrExpr **ext = TS_NEWN(E->a, IrExpr *, n);
        IrExpr **st = TS_NEWN(E->a, IrExpr *, n);
        int64_t bytes = (ts_dtype_bits(dt) + 7) / 8;
        for (int i = 0; i < n; i++) {
            int64_t c = val_to_int(E, items[i], loc, "a workspace extent (a compile-time constant)");
            if (c <= 0) elab_fail(E, TS_ERR_TYPE, loc, "%s: extent %lld must be positive", A->fn, (long long)c);
            if (__builtin_mul_overflow(bytes, c, &bytes) || bytes > ((int64_t)1 << 40))
                elab_fail(E, TS_ERR_TYPE, loc, "%s: the workspace is too large (over 2^40 bytes)", A->fn);
            ext[i] = c <= INT32_MAX ? ir_i32(E->a, c) : ir_int(E->a, c, TS_INT64);
        }
        int64_t acc = 1;
        for (int i = n - 1; i >= 0; i--) { /* row-major, as the launch allocates it */
            st[i] = acc <= INT32_MAX ? ir_i32(E->a, acc) : ir_int(E->a, acc, TS_INT64);
            int64_t c;
            ir_is_const_int(ext[i], &c);
            acc *= c;
        }
        IrKernel *k = E->k;
        IrBuffer *b = ir_buffer(k, "", dt, IR_SCOPE_GLOBAL, n, ext, loc);
        b->strides = st;
        b->param = k->params.n;
        b->workspace = 1;
        IrParam ip = {"", b, NULL, 0};
        ts_vec_push(E->a, k->params, ip);
        Value *v = val_new(E, V_BUFFER, loc);
        v->buf = b;
        return v;
    }
    case B_TIR_CAST:
    case B_CAST2: {
        TsDType dt = val_to_dtype(E, req(E, A, 0, "dtype"), loc);
        Value *v = req(E, A, 1, "value");
        check_args(E, A, 2);
        return cast_to(E, v, dt, loc);
    }
    case B_INFINITY: {
        TsDType dt = val_to_dtype(E, req(E, A, 0, "dtype"), loc);
        check_args(E, A, 1);
        if (!ts_dtype_is_float(dt)) elab_fail(E, TS_ERR_TYPE, loc, "T.infinity needs a float dtype, got %s", ts_dtype_name(dt));
        return val_expr(E, ir_float(E->a, INFINITY, dt), loc);
    }
    case B_MAX_VALUE:
    case B_MIN_VALUE: {
        TsDType dt = val_to_dtype(E, req(E, A, 0, "dtype"), loc);
        check_args(E, A, 1);
        double lim = dtype_limit(dt, id == B_MAX_VALUE);
        if (ts_dtype_is_float(dt)) return val_expr(E, ir_float(E->a, lim, dt), loc);
        return val_expr(E, ir_int(E->a, (int64_t)lim, dt), loc);
    }
    /* ---- statements with effects ---- */
    case B_PRINT: {
        need_kernel(E, A);
        Value *v = req(E, A, 0, "obj");
        Value *msg = arg(E, A, 1, "msg");
        ignore_kw(A, "warp_group_id");
        ignore_kw(A, "warp_id");
        check_args(E, A, 2);
        IrStmt *s = ir_stmt(E->a, IR_S_PRINT, loc);
        if (v->kind == V_BUFFER && v->buf->scope != IR_SCOPE_VAR) s->print.buf = v->buf;
        else s->print.value = val_to_expr(E, v, loc);
        s->print.msg = msg && msg->kind == V_STR ? msg->s : "";
        emit(E, s);
        return val_none(E, loc);
    }
    case B_USE_SWIZZLE: {
        /* T.use_swizzle(panel_size, order="row", enable=True): remaps block
         * indices for L2 locality on the GPU (pass rasterize: panels of
         * panel_size rows of blocks, or of columns for any order other than
         * "row", as TileLang's rasterization2DRow/Column); no effect on
         * results.  enable=False: none. */
        Value *p = arg(E, A, 0, "panel_size");
        Value *order = arg(E, A, 1, "order");
        Value *en = arg(E, A, 2, "enable");
        check_args(E, A, 3);
        if (order && order->kind != V_STR && order->kind != V_NONE)
            elab_fail(E, TS_ERR_TYPE, loc, "T.use_swizzle: order must be a string (\"row\" or \"col\")");
        int64_t panel = p ? val_to_int(E, p, loc, "panel_size") : 10;
        if (panel < 0 || panel > (1 << 20)) elab_fail(E, TS_ERR_TYPE, loc, "T.use_swizzle: panel_size %lld is out of range", (long long)panel);
        bool on = !en || en->kind == V_NONE || val_to_int(E, en, loc, "enable") != 0;
        E->k->swizzle_panel = on ? (int)panel : 0;
        E->k->swizzle_col = on && order && order->kind == V_STR && strcmp(order->s, "row") != 0;
        return val_none(E, loc);
    }
    case B_ANNOTATE_LAYOUT: {
        Value *m = req(E, A, 0, "layout_map");
        ignore_kw(A, "allow_reannotation");
        check_args(E, A, 1);
        if (m->kind != V_DICT) elab_fail(E, TS_ERR_TYPE, loc, "T.annotate_layout takes a dict {buffer: layout}");
        for (int i = 0; i < m->n; i += 2)
            annotate_one(E, val_to_buffer(E, m->items[i], loc, "a T.annotate_layout key"), m->items[i + 1], loc);
        return val_none(E, loc);
    }
    case B_DYNAMIC:
    case B_SYMBOLIC:
    case B_CONST: {
        /* T.dynamic("n") / T.symbolic("n"): run-time shape variables;
         * T.const("M, N"): shape values from -D where given, else run-time
         * variables.  Several comma-separated names give a tuple. */
        Value *names = req(E, A, 0, "name");
        Value *dt = arg(E, A, 1, "dtype");
        check_args(E, A, 2);
        if (names->kind != V_STR) elab_fail(E, TS_ERR_TYPE, loc, "%s needs a string of names", A->fn);
        TsDType d = dt ? val_to_dtype(E, dt, loc) : TS_INT32;
        TS_VEC(Value *) out = {0};
        const char *p = names->s;
        while (*p) {
            while (*p == ' ' || *p == ',') p++;
            const char *q = p;
            while (*q && *q != ' ' && *q != ',') q++;
            if (q == p) break;
            const char *nm = ts_strndup(E->a, p, (size_t)(q - p));
            Value *v = NULL;
            if (id == B_CONST)
                for (int i = 0; i < E->ndefs; i++)
                    if (!strcmp(E->defs[i].name, nm)) {
                        v = define_value(E, E->defs[i].name, E->defs[i].value);
                        if (E->defs_used) E->defs_used[i] = true;
                    }
            if (!v) {
                IrKernel *k = E->k;
                IrVar *var = NULL;
                for (int i = 0; i < k->shape_vars.n; i++)
                    if (!strcmp(k->shape_vars.v[i]->name, nm)) var = k->shape_vars.v[i];
                if (!var) {
                    var = ir_var(k, nm, d, IR_VAR_SHAPE);
                    ts_vec_push(E->a, k->shape_vars, var);
                }
                v = val_expr(E, ir_var_ref(E->a, var), loc);
            }
            ts_vec_push(E->a, out, v);
            p = q;
        }
        if (out.n == 0) elab_fail(E, TS_ERR_TYPE, loc, "%s needs at least one name", A->fn);
        if (out.n == 1) return out.v[0];
        return val_seq(E, V_TUPLE, out.v, out.n, loc);
    }
    case B_EMPTY: {
        /* T.empty(shape, dtype): an output tensor of an eager-style kernel */
        Value *shape = req(E, A, 0, "shape");
        Value *dt = arg(E, A, 1, "dtype");
        check_args(E, A, 2);
        if (!E->eager || E->cur)
            elab_fail(E, TS_ERR_UNSUPPORTED, loc, "T.empty creates an output of an eager-style @tilelang.jit function, before its T.Kernel");
        int n;
        Value *t = val_new(E, V_TENSORTY, loc);
        t->items = val_items(E, shape, &n);
        t->n = n;
        t->dt = dt ? val_to_dtype(E, dt, loc) : TS_FLOAT32;
        Value *v = val_new(E, V_BUFFER, loc);
        v->buf = add_tensor_param(E, "", t, true, loc);
        return v;
    }
    case B_LAYOUT:
    case B_FRAGMENT: {
        /* A user-defined layout: matters to the CUDA backend only; the C
         * target keeps buffers row-major.  T.Layout(shape, fn) with a def
         * keeps fn for T.annotate_layout (annotate_one). */
        Value *v = val_new(E, V_ENUM, loc);
        v->s = "layout";
        Value *fn = id == B_LAYOUT && nargs >= 2 ? args[1] : NULL;
        if (fn && fn->kind == V_FUNC && strcmp(fn->fn->def->name, "<lambda>")) { /* (a lambda only stored, as before) */
            v->s = "layout:fn";
            v->items = TS_NEWN(E->a, Value *, 1);
            v->items[0] = fn;
            v->n = 1;
        }
        return v;
    }
    case B_NOOP_HINT: case B_NOOP_HINT3: case B_NOOP_HINT4:
        return val_none(E, loc); /* register/cache hints for the GPU */
    case B_DEVICE_ASSERT: {
        /* T.device_assert(cond, msg=""): TileLang's debugging check in the
         * kernel.  The condition is elaborated (it must be a valid expression)
         * but not checked at run time: no device trap is generated
         * (doc/LANGUAGE.md) */
        need_kernel(E, A);
        (void)val_to_expr(E, req(E, A, 0, "cond"), loc);
        Value *msg = arg(E, A, 1, "msg");
        if (msg && msg->kind != V_STR) elab_fail(E, TS_ERR_TYPE, loc, "%s: msg must be a string", A->fn);
        check_args(E, A, 2);
        return val_none(E, loc);
    }
    case B_SET_MAX_NREG: case B_INC_MAX_NREG: case B_DEC_MAX_NREG: case B_PRODUCER_REG: case B_CONSUMER_REG: {
        /* TileLang's register hints (tilelang/language/builtin.py): the
         * executing warp group's register budget set to reg_count, raised or
         * lowered (PTX setmaxnreg, sm_90a); annotate_producer_reg_dealloc()
         * lowers it to 24 and annotate_consumer_reg_alloc() raises it to 240
         * unless told.  Recorded as an IR_SET_MAX_NREG statement: pass
         * arch_hints keeps it for sm_90a only, the interpreters skip it. */
        need_kernel(E, A);
        Value *c = arg(E, A, 0, "reg_count");
        int64_t count = c && c->kind != V_NONE ? val_to_int(E, c, loc, "reg_count")
                        : id == B_PRODUCER_REG ? 24 : id == B_CONSUMER_REG ? 240 : -1;
        if (count < 0 && id != B_PRODUCER_REG && id != B_CONSUMER_REG)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: reg_count is required", A->fn);
        int64_t inc = id == B_INC_MAX_NREG || id == B_CONSUMER_REG;
        if (id == B_SET_MAX_NREG) {
            Value *i = req(E, A, 1, "is_inc");
            inc = val_to_int(E, i, loc, "is_inc");
            if (inc != 0 && inc != 1) elab_fail(E, TS_ERR_TYPE, loc, "%s: is_inc must be 0 or 1, got %lld", A->fn, (long long)inc);
        }
        check_args(E, A, id == B_SET_MAX_NREG ? 2 : 1);
        /* PTX ISA, setmaxnreg: a count in 24 .. 256, a multiple of 8 */
        if (count < 24 || count > 256 || count % 8)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: reg_count must be a multiple of 8 from 24 to 256, got %lld", A->fn,
                      (long long)count);
        IrExpr **xs = TS_NEWN(E->a, IrExpr *, 2);
        xs[0] = ir_i32(E->a, count);
        xs[1] = ir_i32(E->a, inc);
        IrStmt *s = ir_stmt(E->a, IR_S_EVAL, loc);
        s->eval.e = ir_call(E->a, IR_SET_MAX_NREG, xs, 2, TS_INT32);
        s->eval.e->loc = loc;
        emit(E, s);
        return val_none(E, loc);
    }
    case B_WAIT_WGMMA: {
        /* T.wait_wgmma(n): wait until at most n groups of T.wgmma_gemm are
         * pending (IR_WGMMA_WAIT; pass arch_hints drops it where no gemm runs
         * on wgmma, the gemms being synchronous there) */
        need_kernel(E, A);
        Value *n = req(E, A, 0, "id");
        int64_t cnt = val_to_int(E, n, loc, "the number of pending groups");
        check_args(E, A, 1);
        if (cnt < 0 || cnt > 7)
            elab_fail(E, TS_ERR_TYPE, loc, "T.wait_wgmma: the number of pending groups must be 0 to 7, got %lld",
                      (long long)cnt);
        IrExpr **xs = TS_NEWN(E->a, IrExpr *, 1);
        xs[0] = ir_i32(E->a, cnt);
        IrStmt *s = ir_stmt(E->a, IR_S_EVAL, loc);
        s->eval.e = ir_call(E->a, IR_WGMMA_WAIT, xs, 1, TS_INT32);
        s->eval.e->loc = loc;
        emit(E, s);
        return val_none(E, loc);
    }
    case B_ASYNC_COMMIT: case B_ASYNC_WAIT: {
        /* T.ptx_commit_group() / T.ptx_wait_group(n): close the group of the
         * thread's T.ptx_cp_async copies issued so far / wait until at most
         * n of its groups are in flight (IR_S_ASYNC_COMMIT / _WAIT).  A
         * run-time n waits for all (a stronger wait: still correct).  The
         * copies TileLang issues asynchronously (T.Parallel(...,
         * prefer_async=True)) are done when they are written here, so in a
         * kernel without T.ptx_cp_async both are dropped by pass simplify. */
        need_kernel(E, A);
        int64_t pending = 0;
        if (id == B_ASYNC_WAIT) {
            Value *n = req(E, A, 0, "num");
            IrExpr *x = int_expr(E, n, loc, "the number of groups");
            if (ir_is_const_int(x, &pending) && (pending < 0 || pending > 7))
                elab_fail(E, TS_ERR_TYPE, loc, "T.ptx_wait_group: the number of pending groups must be 0 to 7, "
                          "got %lld", (long long)pending);
            if (!ir_is_const_int(x, &pending)) pending = 0;
        }
        check_args(E, A, id == B_ASYNC_WAIT ? 1 : 0);
        IrStmt *s = ir_stmt(E->a, id == B_ASYNC_WAIT ? IR_S_ASYNC_WAIT : IR_S_ASYNC_COMMIT, loc);
        if (id == B_ASYNC_WAIT) s->async_wait.pending = (int)pending;
        emit(E, s);
        return val_none(E, loc);
    }
    case B_FENCE_PROXY_ASYNC: {
        /* T.fence_proxy_async(): the thread's shared-memory writes made visible
         * to the async proxy (wgmma reads its operand tiles there) */
        need_kernel(E, A);
        check_args(E, A, 0);
        IrStmt *s = ir_stmt(E->a, IR_S_EVAL, loc);
        s->eval.e = ir_call(E->a, IR_FENCE_PROXY_ASYNC, NULL, 0, TS_INT32);
        s->eval.e->loc = loc;
        emit(E, s);
        return val_none(E, loc);
    }
    case B_ACCESS_PTR: return access_ptr(E, A);
    case B_PTX_CP_ASYNC: return ptx_cp_async(E, A);
    case B_PRIM_FUNC: case B_MACRO: case B_JIT:
        elab_fail(E, TS_ERR_UNSUPPORTED, loc, "%s is only supported as a decorator", A->fn);
    /* ---- explicit thread programming: the thread index along one axis of
     * T.Kernel's threads=.  The CUDA target numbers threads flat and splits
     * the index per axis (codegen_cuda.c); the C target runs a block as one
     * thread and refuses the index where it is used, naming it. ---- */
    case B_GET_THREAD_BINDING: {
        need_kernel(E, A);
        Value *d = arg(E, A, 0, "dim");
        check_args(E, A, 1);
        int64_t axis = d && d->kind != V_NONE ? val_to_int(E, d, loc, "dim") : 0;
        if (axis < 0 || axis > 2) elab_fail(E, TS_ERR_TYPE, loc, "%s: dim must be 0, 1 or 2, got %lld", A->fn, (long long)axis);
        IrExpr *x = ir_var_ref(E->a, thread_var(E, (int)axis));
        x->loc = loc; /* where a target without threads refuses it */
        return val_expr(E, x, loc);
    }
    case B_GET_BLOCK_BINDING: { /* T.get_block_binding(dim): the block index along dim (T.Kernel's bx, by, bz) */
        need_kernel(E, A);
        Value *d = arg(E, A, 0, "dim");
        check_args(E, A, 1);
        int64_t axis = d && d->kind != V_NONE ? val_to_int(E, d, loc, "dim") : 0;
        if (axis < 0 || axis > 2) elab_fail(E, TS_ERR_TYPE, loc, "%s: dim must be 0, 1 or 2, got %lld", A->fn, (long long)axis);
        if (axis >= E->k->ngrid || !E->k->block_idx[axis]) return val_int(E, 0, loc); /* a grid of extent 1 there */
        IrExpr *x = ir_var_ref(E->a, E->k->block_idx[axis]);
        x->loc = loc;
        return val_expr(E, x, loc);
    }
    case B_SHIFT_LEFT: /* TVM's shift_left(x, y) / shift_right(x, y): x << y, x >> y */
    case B_SHIFT_RIGHT: {
        Value *x = req(E, A, 0, "x"), *y = req(E, A, 1, "y");
        ignore_kw(A, "span");
        check_args(E, A, 2);
        return binop(E, id == B_SHIFT_LEFT ? AST_LSHIFT : AST_RSHIFT, x, y, loc);
    }
    case B_DP4A: { /* T.dp4a(a, b, c) (extern_builtins.c) */
        Value *a = req(E, A, 0, "A"), *b = req(E, A, 1, "B"), *c = req(E, A, 2, "C");
        check_args(E, A, 3);
        ext_dp4a(E, a, b, c, loc);
        return val_none(E, loc);
    }
    case B_THREAD_BINDING: {
        /* T.thread_binding([begin,] end, thread="threadIdx.x"): begin + the thread
         * index; the range must be the block's whole extent along that axis */
        need_kernel(E, A);
        Value *a0 = req(E, A, 0, "begin"), *a1 = arg(E, A, 1, "end"), *th = arg(E, A, 2, "thread");
        ignore_kw(A, "annotations");
        check_args(E, A, 3);
        const char *t = th && th->kind == V_STR ? th->s : "";
        int axis = !strncmp(t, "threadIdx.", 10) && t[10] >= 'x' && t[10] <= 'z' && !t[11] ? t[10] - 'x' : -1;
        if (axis < 0)
            elab_fail(E, TS_ERR_TYPE, loc, "%s: thread= must be \"threadIdx.x\", \"threadIdx.y\" or \"threadIdx.z\"", A->fn);
        bool two = a1 && a1->kind != V_NONE;
        int64_t begin = two ? val_to_int(E, a0, loc, "begin") : 0;
        int64_t end = val_to_int(E, two ? a1 : a0, loc, "end");
        if (end - begin != E->k->threads[axis])
            elab_fail(E, TS_ERR_UNSUPPORTED, loc,
                      "%s: the range %lld..%lld of %s must be the block's %d threads along that axis (T.Kernel threads=)",
                      A->fn, (long long)begin, (long long)end, t, E->k->threads[axis]);
        IrExpr *x = ir_var_ref(E->a, thread_var(E, axis));
        x->loc = loc;
        return val_expr(E, begin ? ir_bin(E->a, IR_ADD, x, ir_i32(E->a, begin)) : x, loc);
    }
    case B_METHOD: return call_method(E, f->items[0], f->s, A);
    case B_PERSISTENT: {
        /* T.Persistent(domain, wave_size, index, group_size=8): see exec_persistent */
        need_kernel(E, A);
        Value *dom = req(E, A, 0, "domain"), *wave = req(E, A, 1, "wave_size"), *index = req(E, A, 2, "index");
        Value *grp = arg(E, A, 3, "group_size");
        check_args(E, A, 4);
        int n;
        Value **items = val_items(E, dom, &n);
        if (n < 1 || n > 4) elab_fail(E, TS_ERR_TYPE, loc, "%s: the domain takes 1 to 4 extents, %d given", A->fn, n);
        IterSpec *it = TS_NEW(E->a, IterSpec);
        it->kind = IR_FOR_SERIAL;
        it->persistent = true;
        it->n = n;
        for (int i = 0; i < n; i++) it->domain[i] = int_expr(E, items[i], loc, "a T.Persistent extent");
        it->wave = int_expr(E, wave, loc, "wave_size");
        it->index = int_expr(E, index, loc, "index");
        it->group = grp && grp->kind != V_NONE ? int_expr(E, grp, loc, "group_size") : ir_i32(E->a, 8);
        Value *v = val_new(E, V_ITER, loc);
        v->iter = it;
        return v;
    }
    case B_TL_DTYPE: { /* tilelang.DataType("float16"): the dtype */
        Value *v = val_new(E, V_DTYPE, loc);
        v->dt = val_to_dtype(E, req(E, A, 0, "dtype"), loc);
        check_args(E, A, 1);
        return v;
    }
    case B_ISINSTANCE: {
        Value *x = req(E, A, 0, "obj"), *t = req(E, A, 1, "class_or_tuple");
        check_args(E, A, 2);
        return val_bool(E, is_instance(E, x, t, loc), loc);
    }
    case B_THREAD_RETURN: {
        /* T.thread_return(): the calling thread is done (CUDA's `return` in
         * per-thread code; TileScale's DeepEP combine: warps past the ranks) */
        need_kernel(E, A);
        check_args(E, A, 0);
        IrStmt *s = ir_stmt(E->a, IR_S_EVAL, loc);
        s->eval.e = ir_call(E->a, IR_THREAD_RETURN, NULL, 0, TS_INT32);
        emit(E, s);
        return val_none(E, loc);
    }
    case B_SYNC_THREADS:
        /* __syncthreads(): a barrier of the block's threads.  Also kept on the
         * C target: pass thread_loops_c drops it where the block's threads
         * run in program order and keeps it where they run as coroutines */
        need_kernel(E, A);
        {
            /* T.sync_threads(barrier_id, arrive_count): a named barrier (bar.sync) */
            Value *idv = arg(E, A, 0, "barrier_id"), *cv = arg(E, A, 1, "arrive_count");
            check_args(E, A, 2);
            int64_t bid = 0, cnt = 0, nt = ir_kernel_nthreads(E->k);
            IrExpr *rid = NULL; /* an id computed at run time */
            if (idv && idv->kind != V_NONE) {
                rid = val_to_expr(E, idv, loc);
                if (!ts_dtype_is_int(rid->dt))
                    elab_fail(E, TS_ERR_TYPE, loc, "T.sync_threads: the barrier id must be an integer");
                if (ir_is_const_int(rid, &bid)) {
                    rid = NULL;
                } else { /* IR_S_BARRIER: the largest a run-time id may be (T.ws roles number theirs above) */
                    IrArith ar;
                    ir_arith_init(&ar, E->a, E->k);
                    IrInterval iv = ir_arith_bound(&ar, rid);
                    bid = iv.lo >= 0 && iv.hi <= 15 ? (iv.hi < 1 ? 1 : iv.hi) : 15;
                }
            }
            if (cv && cv->kind != V_NONE) cnt = val_to_int(E, cv, loc, "a thread count");
            if (rid && !cnt)
                elab_fail(E, TS_ERR_TYPE, loc, "T.sync_threads: a barrier id computed at run time needs the thread count");
            if (bid < 0 || bid > 15)
                elab_fail(E, TS_ERR_TYPE, loc, "T.sync_threads: barrier id %lld is outside [0, 15]", (long long)bid);
            if (cnt && (cnt < 32 || cnt % 32 || cnt > nt))
                elab_fail(E, TS_ERR_TYPE, loc, "T.sync_threads: %lld threads is not a whole number of warps of the "
                          "block's %lld threads", (long long)cnt, (long long)nt);
            if (bid && !cnt) cnt = nt;
            if (!rid && !bid && cnt && cnt != nt)
                elab_fail(E, TS_ERR_TYPE, loc, "T.sync_threads: barrier 0 is the whole block's (%lld threads); a "
                          "barrier of %lld threads needs an id in [1, 15]", (long long)nt, (long long)cnt);
            IrStmt *s = ir_stmt(E->a, IR_S_BARRIER, loc);
            s->barrier.id = (int)bid;
            s->barrier.count = bid ? (int)cnt : 0;
            if (rid) s->barrier.idv = rid->dt == TS_INT32 ? rid : ir_cast(E->a, TS_INT32, rid);
            emit(E, s);
        }
        return val_none(E, loc);
    case B_PARALLEL_TIR: {
        /* TVM script's T.parallel(start, stop=None): one level of T.Parallel */
        Value *a0 = req(E, A, 0, "start"), *a1 = arg(E, A, 1, "stop");
        ignore_kw(A, "annotations");
        check_args(E, A, 2);
        IterSpec *it = TS_NEW(E->a, IterSpec);
        it->kind = IR_FOR_PARALLEL;
        it->n = 1;
        if (a1 && a1->kind != V_NONE) {
            it->start[0] = int_expr(E, a0, loc, "a loop bound");
            it->extent[0] = ir_bin(E->a, IR_SUB, int_expr(E, a1, loc, "a loop bound"), it->start[0]);
        } else {
            it->start[0] = ir_i32(E->a, 0);
            it->extent[0] = int_expr(E, a0, loc, "a T.parallel extent");
        }
        Value *v = val_new(E, V_ITER, loc);
        v->iter = it;
        return v;
    }
    /* ---- Python builtins ---- */
    case B_LEN: {
        Value *v = req(E, A, 0, "obj");
        check_args(E, A, 1);
        if (v->kind == V_TUPLE || v->kind == V_LIST) return val_int(E, v->n, loc);
        if (v->kind == V_DICT) return val_int(E, v->n / 2, loc);
        if (v->kind == V_STR) return val_int(E, (int64_t)strlen(v->s), loc);
        if (v->kind == V_BUFFER) return val_expr(E, v->buf->shape[0], loc);
        elab_fail(E, TS_ERR_TYPE, loc, "len() of a %s", val_kind_name(v));
    }
    case B_PYABS: {
        Value *v = req(E, A, 0, "x");
        check_args(E, A, 1);
        if (v->kind == V_INT) return val_int(E, v->i < 0 ? -v->i : v->i, loc);
        if (v->kind == V_FLOAT) return val_float(E, fabs(v->f), loc);
        IrExpr **pa = TS_NEWN(E->a, IrExpr *, 1);
        pa[0] = val_to_expr(E, v, loc);
        return val_expr(E, ir_call(E->a, IR_ABS, pa, 1, pa[0]->dt), loc);
    }
    case B_INT:
    case B_FLOAT:
    case B_BOOL: {
        Value *v = arg(E, A, 0, "x");
        check_args(E, A, 1);
        if (!v) return id == B_INT ? val_int(E, 0, loc) : id == B_FLOAT ? val_float(E, 0, loc) : val_bool(E, false, loc);
        if (v->kind == V_STR && id != B_BOOL) {
            char *end;
            double d = strtod(v->s, &end);
            if (*end || !*v->s) elab_fail(E, TS_ERR_TYPE, loc, "cannot convert '%s' to a number", v->s);
            return id == B_INT ? val_int(E, val_float_to_int(E, d, loc), loc) : val_float(E, d, loc);
        }
        if (id == B_BOOL) return val_bool(E, val_truthy(E, v, loc), loc);
        if (val_is_const(v)) {
            double d = v->kind == V_FLOAT ? v->f : (double)(v->kind == V_INT ? v->i : v->b);
            if (id == B_INT) return val_int(E, v->kind == V_FLOAT ? val_float_to_int(E, v->f, loc) : v->kind == V_INT ? v->i : v->b, loc);
            return val_float(E, d, loc);
        }
        return cast_to(E, v, id == B_INT ? TS_INT32 : TS_FLOAT32, loc);
    }
    case B_STR: {
        Value *v = req(E, A, 0, "x");
        check_args(E, A, 1);
        if (v->kind == V_STR) return v;
        const char *t = val_text(E, v, false);
        if (t) return val_str(E, t, loc);
        elab_fail(E, TS_ERR_TYPE, loc, "str() of a %s is not supported", val_kind_name(v));
    }
    case B_TUPLE:
    case B_LIST: {
        Value *v = arg(E, A, 0, "x");
        check_args(E, A, 1);
        if (!v) return val_seq(E, id == B_TUPLE ? V_TUPLE : V_LIST, NULL, 0, loc);
        if (v->kind == V_ITER && v->iter->host) {
            int64_t lo, n;
            ir_is_const_int(v->iter->start[0], &lo);
            ir_is_const_int(v->iter->extent[0], &n);
            int64_t st = v->iter->step ? v->iter->step->ival : 1;
            if (n > (1 << 24)) elab_fail(E, TS_ERR_TYPE, loc, "%s of a range of %lld items is too long", A->fn, (long long)n);
            Value **items = TS_NEWN(E->a, Value *, n > 0 ? n : 1);
            for (int64_t i = 0; i < n; i++) items[i] = val_int(E, lo + i * st, loc);
            return val_seq(E, id == B_TUPLE ? V_TUPLE : V_LIST, items, (int)(n > 0 ? n : 0), loc);
        }
        int n;
        Value **items = val_items(E, v, &n);
        if (v->kind != V_TUPLE && v->kind != V_LIST) elab_fail(E, TS_ERR_TYPE, loc, "%s of a %s", A->fn, val_kind_name(v));
        return val_seq(E, id == B_TUPLE ? V_TUPLE : V_LIST, items, n, loc);
    }
    case B_PYPRINT: return val_none(E, loc);
    case B_PYPOW:
    case B_MPOW: {
        Value *a = req(E, A, 0, "base"), *b = req(E, A, 1, "exp");
        check_args(E, A, 2);
        Value *r = binop(E, AST_POW, a, b, loc);
        if (id == B_MPOW && r->kind == V_INT) return val_float(E, (double)r->i, loc);
        return r;
    }
    case B_PYROUND: {
        Value *v = req(E, A, 0, "x");
        check_args(E, A, 2);
        if (v->kind == V_FLOAT) return val_int(E, val_float_to_int(E, nearbyint(v->f), loc), loc);
        return v;
    }
    case B_SUM: {
        Value *v = req(E, A, 0, "iterable");
        check_args(E, A, 1);
        int n;
        Value **items = val_items(E, v, &n);
        Value *acc = val_int(E, 0, loc);
        for (int i = 0; i < n; i++) acc = binop(E, AST_ADD, acc, items[i], loc);
        return acc;
    }
    case B_ENUMERATE:
    case B_ZIP: {
        check_args(E, A, 4);
        int n = -1;
        for (int i = 0; i < nargs; i++) {
            int m;
            val_items(E, args[i], &m);
            if (n < 0 || m < n) n = m;
        }
        if (n < 0) n = 0;
        Value **items = TS_NEWN(E->a, Value *, n ? n : 1);
        for (int i = 0; i < n; i++) {
            int w = id == B_ENUMERATE ? 2 : nargs;
            Value **t = TS_NEWN(E->a, Value *, w);
            for (int j = 0; j < w; j++) {
                int m;
                if (id == B_ENUMERATE) t[j] = j == 0 ? val_int(E, i, loc) : val_items(E, args[0], &m)[i];
                else t[j] = val_items(E, args[j], &m)[i];
            }
            items[i] = val_seq(E, V_TUPLE, t, w, loc);
        }
        return val_seq(E, V_LIST, items, n, loc);
    }
    /* ---- math ---- */
    case B_MSQRT: case B_MLOG: case B_MLOG2: case B_MEXP: case B_MCEIL: case B_MFLOOR:
    case B_MLOG10: case B_MISQRT: {
        Value *v = req(E, A, 0, "x");
        Value *base = id == B_MLOG ? arg(E, A, 1, "base") : NULL;
        check_args(E, A, id == B_MLOG ? 2 : 1);
        if (!val_is_const(v)) elab_fail(E, TS_ERR_TYPE, loc, "math.%s needs a compile-time number; use T.%s in kernels", builtin_name(id), builtin_name(id));
        double x = v->kind == V_FLOAT ? v->f : (double)(v->kind == V_INT ? v->i : v->b);
        switch (id) {
        case B_MSQRT: return val_float(E, sqrt(x), loc);
        case B_MLOG: {
            double r = log(x);
            if (base) r /= log(base->kind == V_FLOAT ? base->f : (double)base->i);
            return val_float(E, r, loc);
        }
        case B_MLOG2: return val_float(E, log2(x), loc);
        case B_MLOG10: return val_float(E, log10(x), loc);
        case B_MEXP: return val_float(E, exp(x), loc);
        case B_MCEIL: return val_int(E, val_float_to_int(E, ceil(x), loc), loc);
        case B_MFLOOR: return val_int(E, val_float_to_int(E, floor(x), loc), loc);
        default: return val_int(E, val_float_to_int(E, floor(sqrt(x)), loc), loc);
        }
    }
    default: break;
    }
    elab_fail(E, TS_ERR_INTERNAL, loc, "builtin %s has no implementation", A->fn);
}
