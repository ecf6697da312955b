/*
 * elab_int.h — what elab.c (the interpreter: values, scopes, expressions,
 * statements) and builtins.c (the T.* functions and Python builtins) share.
 *
 * A Value is anything a name can be bound to while elaborating: a Python
 * constant, a sequence, an IR expression (symbolic, only known when the
 * kernel runs), a buffer or a region of one, a function, a module, ...
 */
#ifndef TS_ELAB_INT_H
#define TS_ELAB_INT_H

#include "elab/elab.h"
#include "base/caps.h"
#include "op/op.h"

typedef struct Value Value;
typedef struct Env Env;

typedef enum ValueKind {
    V_NONE,
    V_BOOL,      /* b */
    V_INT,       /* i */
    V_FLOAT,     /* f */
    V_STR,       /* s */
    V_DTYPE,     /* dt: T.float16 and friends */
    V_TUPLE,     /* items */
    V_LIST,      /* items */
    V_DICT,      /* items = k0, v0, k1, v1, ... */
    V_EXPR,      /* e: a run-time IR expression */
    V_BUFFER,    /* buf: a whole buffer */
    V_ACCESS,    /* buf[idx...]: one element (a load, or the start of a tile) */
    V_REGION,    /* buf[a:b, ...]: a region (reg) */
    V_FUNC,      /* a user `def`: fn */
    V_BUILTIN,   /* a T.* function or Python builtin: bi (and self for methods) */
    V_MODULE,    /* a module: s = its dotted name */
    V_TENSORTY,  /* T.Tensor(shape, dtype): items = shape, dt */
    V_KERNEL,    /* the value of T.Kernel(...): items = grid, i = threads */
    V_ITER,      /* T.Parallel/T.Pipelined/range/...: see iter */
    V_ENUM,      /* s = "GemmWarpPolicy.FullRow" and the like */
    V_OPAQUE,    /* something outside the supported subset: s = why, i = status to report */
    V_SCHED,     /* T.PersistentTileScheduler(...): sched (sched_builtins.c) */
    V_PTR,       /* T.access_ptr(...): the address of buf[idx...] (buf->ndim indices), e = the
                    extent in elements it covers, i = its access mask (1 read, 2 write, 3 both);
                    T.ptx_cp_async takes one (its dst and src) and T.call_extern (an address) */
} ValueKind;

typedef enum FuncKind {
    FN_PLAIN,    /* a Python function run at compile time (or inlined) */
    FN_PRIM,     /* @T.prim_func */
    FN_MACRO,    /* @T.macro: inlined into the kernel */
} FuncKind;

typedef struct Func {
    const AstStmt *def;  /* the def statement */
    Env *closure;        /* scope it was defined in */
    FuncKind kind;
    Value *out_idx;      /* @tilelang.jit(out_idx=...) or NULL */
    bool fast_math;      /* @tilelang.jit(pass_configs={...TL_ENABLE_FAST_MATH: True}) */
    bool user_sync;      /* @tilelang.jit(pass_configs={...TL_DISABLE_THREAD_STORAGE_SYNC: True}) */
    const AstExpr *foreign_target; /* @tilelang.jit(target="hip ...") and the like: a GPU backend this
                                      compiler does not have (the string), refused when it is compiled */
} Func;

typedef struct IterSpec {
    IrForKind kind;      /* serial, parallel, pipelined, unroll, vectorized */
    int n;               /* loop nest depth (T.Parallel(a, b) has 2) */
    IrExpr *start[4];    /* per level */
    IrExpr *extent[4];
    IrExpr *step;        /* serial with a step, else NULL */
    int num_stages;      /* T.Pipelined */
    int *order, *stage, norder;
    bool host;           /* range() over constants outside a kernel */
    /* T.Persistent(domain, wave_size, index, group_size): the tiles of `domain`
     * this block takes, one per wave (exec_persistent); n = len(domain) */
    bool persistent;
    IrExpr *domain[4], *wave, *index, *group;
} IterSpec;

/* T.PersistentTileScheduler's compile-time description and its state
 * (sched_builtins.c). */
typedef struct TileSched {
    IrExpr *primary, *secondary; /* tiles along the swept axis and the panelled one (int32) */
    IrExpr *total;               /* cluster rows x columns: linear indices below it are tiles */
    IrExpr *workers;             /* num_workers: the stride of next_tile */
    int64_t swizzle, cluster;    /* swizzle_size, cluster_size (>= 1) */
    bool column_major, stateful;
    IrBuffer *m, *n, *lin, *iter;/* the int32 T.alloc_var state; NULL when not stateful */
} TileSched;

struct Value {
    ValueKind kind;
    TsLoc loc;
    bool b;
    int64_t i;
    double f;
    const char *s;      /* V_STR text (b: it came from a -D value, see define_value) */
    TsDType dt;
    IrExpr *e;
    IrBuffer *buf;
    IrExpr **idx;       /* V_ACCESS indices (buf->ndim of them) */
    IrRegion reg;       /* V_REGION */
    Value **items;
    int n;
    Func *fn;
    int bi;             /* builtin id (builtins.c) */
    IterSpec *iter;
    const AstStmt *unparsed; /* V_OPAQUE from a statement that did not parse */
    TileSched *sched;   /* V_SCHED */
};

typedef struct Binding {
    const char *name;
    Value *v;
} Binding;

struct Env {
    Env *parent;
    TS_VEC(Binding) vars;
    int *slots;          /* open-addressing index into vars (index + 1, 0: empty), once
                          * vars has grown past a few entries: a module with n top-level
                          * definitions elaborates in O(n), not O(n^2) */
    int nslots;          /* capacity of slots (a power of two), 0 when there is none */
};

/* A helper module imported from beside the compiled file (import_sibling). */
typedef struct ImportedModule {
    const char *path;    /* its file */
    Env *env;            /* its top-level names; NULL while it is being run */
} ImportedModule;

/* The elaborator's state for one compilation. */
typedef struct Elab {
    TsDiag *d;
    TsArena *a;
    const AstModule *mod;
    IrKernel *k;         /* kernel under construction (the last of the chain) */
    IrKernel *k0;        /* the first kernel of the chain (what ts_elaborate returns) */
    IrStmt *cur;         /* IR_S_SEQ receiving emitted statements */
    Env *globals;
    int in_kernel;       /* >0 while walking a prim_func body */
    bool have_kernel;    /* a T.Kernel was seen */
    bool eager;          /* elaborating an eager-style jit function (no prim_func) */
    const TsDefine *defs;/* the -D values (T.const looks names up here) */
    int ndefs;
    bool *defs_used;     /* eager style: which -D values a parameter or T.const took */
    int ir_loops;        /* IR loops enclosing the current statement */
    int depth;           /* call depth, to stop runaway recursion */
    long steps;          /* statements run, to stop endless compile-time loops */
    /* control flow of compile-time execution */
    bool returning, breaking, continuing;
    Value *retval;
    Value *out_idx;      /* the entry's @tilelang.jit(out_idx=...) */
    bool fast_math;      /* the entry's @tilelang.jit asks for fast math (IrKernel.fast_math) */
    bool user_sync;      /* the entry's @tilelang.jit orders its threads itself (IrKernel.user_sync) */
    TS_VEC(ImportedModule) imports; /* helper modules imported so far (once each per compile) */
    /* T.alloc_reducer buffers and their combine (IR_ADD, IR_MAX, IR_MIN,
     * IR_BITAND, IR_BITOR, IR_BITXOR): T.Parallel nests updating one are
     * reordered (elab_parallel_reducers) */
    TS_VEC(struct ElabReducer { IrBuffer *buf; IrBinOp op; }) reducers;
    IrBuffer *rng_state; /* T.rng_init's per-thread Philox state (builtins.c), or NULL */
    Value *allreduce;    /* inside `with T.attr(T.comm_reducer(f, [id]), "reduce_scope", ...)`: that
                          * reducer (items: f, id) for T.tvm_thread_allreduce, else NULL */
    int role_depth;      /* > 0 inside `with T.ws(...)` (barrier_builtins.c) */
    int role_threads;    /* ... the role's thread count */
    IrStmt *role_body;   /* ... and its body (statements straight in it run on every thread of the role) */
    IrExpr *unit_id;     /* inside `with T.Scale("warpgroup")` / ("warp"): this unit's index (a constant in
                          * each role copy of the body, tid // 32 in a warp's lane form) ... */
    int unit_num;        /* ... and the number of units (T.view of a block tile takes the unit's part);
                          * 0 outside */
    const TsCaps *caps;  /* the target compiled for (host queries such as torch.cuda.
                          * get_device_capability read it); NULL: unknown */
} Elab;

/* Values. */
Value *val_new(Elab *E, ValueKind kind, TsLoc loc);
Value *val_int(Elab *E, int64_t i, TsLoc loc);
Value *val_float(Elab *E, double f, TsLoc loc);
Value *val_bool(Elab *E, bool b, TsLoc loc);
Value *val_none(Elab *E, TsLoc loc);
Value *val_str(Elab *E, const char *s, TsLoc loc);
Value *val_expr(Elab *E, IrExpr *e, TsLoc loc);
Value *val_seq(Elab *E, ValueKind kind, Value **items, int n, TsLoc loc);
const char *val_kind_name(const Value *v);
bool val_is_const(const Value *v); /* bool, int or float */

/* Conversions, each failing with a clear error at loc. */
IrExpr *val_to_expr(Elab *E, Value *v, TsLoc loc);
int64_t val_float_to_int(Elab *E, double d, TsLoc loc); /* Python int(d), checked */
int64_t val_to_int(Elab *E, Value *v, TsLoc loc, const char *what);
bool val_truthy(Elab *E, Value *v, TsLoc loc);
TsDType val_to_dtype(Elab *E, Value *v, TsLoc loc);
/* A sequence's items (tuple/list), or the value itself as a 1-item list. */
Value **val_items(Elab *E, Value *v, int *n);
/* Region view of a buffer, access or region value. */
IrRegion val_to_region(Elab *E, Value *v, TsLoc loc, const char *what);
IrBuffer *val_to_buffer(Elab *E, Value *v, TsLoc loc, const char *what);

/* Scopes. */
Env *env_new(Elab *E, Env *parent);
Value *env_lookup(Env *env, const char *name);
void env_set(Elab *E, Env *env, const char *name, Value *v);

/* Values (value.c). */
/* Python's str() (repr: repr()) of a compile-time value; NULL if it has no text here. */
const char *val_text(Elab *E, const Value *v, bool repr);
bool val_is_symbolic(const Value *v); /* a run-time value: expression, element, var */
/* Report an opaque value's reason as the error (its status, or unsupported). */
TS_NORETURN void fail_opaque(Elab *E, Value *v, TsLoc loc);

/* Evaluation (expr.c). */
bool expr_has_load(const IrExpr *e);
bool expr_reads_global(const IrExpr *e);
/* A Python constant meeting a run-time value of dtype `other`, as IR. */
IrExpr *adapt_literal(Elab *E, Value *lit, TsDType other, TsLoc loc);
/* x[...] for any subscriptable value (x is an AST_SUBSCRIPT). */
Value *subscript(Elab *E, Env *env, const AstExpr *x);
/* Run a user function (plain or macro) with bound arguments. */
Value *call_user(Elab *E, Func *fn, Value **args, int nargs, const char **kw, Value **kwv,
                 int nkw, TsLoc loc);

/* Statements (elab.c). */
void exec_block(Elab *E, Env *env, const AstBlock *b);
/* Bind a value to an assignment target (a name, a tuple of targets, a subscript...). */
void assign_target(Elab *E, Env *env, const AstExpr *target, Value *v, TsLoc loc);
/* The items of a value iterated at compile time (a range over constants, a
 * tuple, list, dict's keys, a str's characters); an error naming it otherwise. */
Value **iter_items(Elab *E, Value *it, TsLoc loc, int *n);

Value *eval(Elab *E, Env *env, const AstExpr *x);
Value *call_value(Elab *E, Value *f, Value **args, int nargs, const char **kw,
                  Value **kwv, int nkw, TsLoc loc);
Value *binop(Elab *E, AstOp op, Value *a, Value *b, TsLoc loc);
void emit(Elab *E, IrStmt *s);

/* T.int4 / T.float4_e2m1fn storage: the view of dtype dt (shape ext[0..n))
 * of `packed`, an int8 buffer of the same shape but the last extent halved
 * (two elements to a byte, the low nibble first, as TileLang's pack_int4),
 * or, for a float4_e2m1fn fragment or local, a uint8 buffer of the same
 * shape (one code to a byte); builtins.c. */
IrBuffer *elab_int4_view(Elab *E, IrBuffer *packed, TsDType dt, IrExpr **ext, int n, TsLoc loc);
/* ext[n - 1] halved for the packed int8 storage of an int4 buffer: an
 * error unless it is an even constant (what: the buffer, for the message). */
IrExpr **elab_int4_packed_shape(Elab *E, IrExpr **ext, int n, TsLoc loc, const char *what);
/* A global tensor parameter (eager style: annotations and T.empty). */
IrBuffer *add_tensor_param(Elab *E, const char *name, Value *tensorty, bool is_output, TsLoc loc);
/* Start the next kernel of the chain (a further `with T.Kernel`). */
void start_next_kernel(Elab *E);
/* A -D value as a Value. */
Value *define_value(Elab *E, const char *name, const char *text);

/* After a T.Parallel nest's body: where it updates a T.alloc_reducer at
 * indices that do not use some of its loop variables, those levels
 * become serial loops inside the others (builtins.c). */
void elab_parallel_reducers(Elab *E, IrStmt *nest);

/* Builtins (builtins.c). */
Value *builtin_attr(Elab *E, Value *obj, const char *name, TsLoc loc); /* NULL if none */
Value *builtin_global(Elab *E, const char *name, TsLoc loc);           /* NULL if none */
/* The distributed T.* names (comm_builtins.c): builtin ids from
 * ELAB_COMM_BASE up (below builtins.c's intrinsic ids). */
#define ELAB_COMM_BASE 500
Value *comm_builtin_lookup(Elab *E, const char *name, TsLoc loc);
/* TileScale's host dtype tables indexed by a dtype name
 * (tilelang.distributed.utils: dtype_map[d] a dtype, dsize_map[d] its
 * bytes), or NULL when m is another module. */
Value *comm_host_map(Elab *E, const Value *m, const Value *key, TsLoc loc);
/* A member of T.CmpType / T.Amo (NVSHMEM's numbers), or NULL for other enums. */
Value *comm_enum_attr(Elab *E, const Value *obj, const char *name, TsLoc loc);
Value *comm_builtin_call(Elab *E, int id, Value **args, int nargs, const char **kw, Value **kwv, int nkw,
                         TsLoc loc);
/* T.copy(src, dst, dst=rank | src=rank): handled (true) or not a remote copy. */
bool comm_copy_remote(Elab *E, Value **args, int nargs, const char **kw, Value **kwv, int nkw, TsLoc loc);
/* `with T.Scale(level) as (id, count):` (the context value is V_ENUM "Scale.<level>"). */
void comm_exec_scale(Elab *E, Env *env, const AstStmt *s, Value *scale);
/* External CUDA source (extern_builtins.c): T.import_source, T.call_extern,
 * T.access_ptr; builtin ids from ELAB_EXT_BASE up (below the distributed ones). */
#define ELAB_EXT_BASE 400
Value *ext_builtin_lookup(Elab *E, const char *name, TsLoc loc);
Value *ext_builtin_call(Elab *E, int id, Value **args, int nargs, const char **kw, Value **kwv, int nkw,
                        TsLoc loc);
/* The address (IR_EXTERN_ADDR) of element v (a buffer: its first; a region:
 * its start) plus off elements (NULL: none), for an external function: per-
 * thread buffers only, an error naming fn otherwise. */
IrExpr *ext_address(Elab *E, Value *v, IrExpr *off, const char *fn, TsLoc loc);
/* T.dp4a(a, b, c): c[0] += the dot product of the four int8 elements from
 * a and from b (elements, buffers or regions: their first), c int32. */
void ext_dp4a(Elab *E, Value *a, Value *b, Value *c, TsLoc loc);
/* T.PersistentTileScheduler (sched_builtins.c): the constructor and the
 * methods (a V_BUILTIN whose items[0] is the scheduler), ids from
 * ELAB_SCHED_BASE up (below the external-source ones). */
#define ELAB_SCHED_BASE 380
Value *sched_builtin_lookup(Elab *E, const char *name, TsLoc loc);
Value *sched_attr(Elab *E, Value *obj, const char *name, TsLoc loc);
Value *sched_builtin_call(Elab *E, Value *f, Value **args, int nargs, const char **kw, Value **kwv, int nkw,
                          TsLoc loc);
/* What tilelang.carver's driver.get_num_sms() answers for the target compiled for. */
int64_t elab_num_sms(Elab *E);
/* TileLang's mbarrier and warp-specialization names (barrier_builtins.c):
 * builtin ids from ELAB_BAR_BASE up (above the distributed ones). */
#define ELAB_BAR_BASE 900
Value *bar_builtin_lookup(Elab *E, const char *name, TsLoc loc);
/* An mbarrier argument of `fn`: a T.alloc_barrier buffer (element 0) or one of its elements. */
void elab_barrier_of(Elab *E, const char *fn, Value *v, TsLoc loc, IrBuffer **buf, IrExpr **idx);
Value *bar_builtin_call(Elab *E, int id, Value **args, int nargs, const char **kw, Value **kwv, int nkw,
                        TsLoc loc);
/* `with T.ws(ids...):` (the context value is V_ENUM "T.ws", i = first thread, n = threads). */
void bar_exec_role(Elab *E, Env *env, const AstStmt *s, Value *ws);
Value *builtin_call(Elab *E, Value *f, Value **args, int nargs, const char **kw,
                    Value **kwv, int nkw, TsLoc loc);
Value *module_value(Elab *E, const char *dotted, TsLoc loc);
/* f[ix] for a builtin f (T.Tensor[(M, N), dtype]). */
Value *builtin_subscript(Elab *E, Value *f, Value *ix, TsLoc loc);

TS_NORETURN void elab_fail(Elab *E, TsStatus st, TsLoc loc, const char *fmt, ...)
    TS_PRINTF(4, 5);

#endif
