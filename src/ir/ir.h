/*
 * ir.h — the tile IR.
 *
 * A kernel (IrKernel) is what one `@T.prim_func` with one `T.Kernel` turns
 * into after elaboration: parameters (tensors and scalars), a grid of
 * blocks, threads per block, and a body of statements.  Statements hold
 * expressions; tile operators (IR_S_TILEOP: copy, gemm, fill, reduce, ...)
 * are statements that act on whole buffer regions, and passes lower them to
 * loops of loads and stores for a target.
 *
 * Everything a later stage adds has a place here already:
 *  - fragment layouts (IrLayout: element -> (thread, local index)) that the
 *    CUDA backend's layout inference fills in;
 *  - shared-memory swizzles (IrBuffer.swizzle);
 *  - software-pipeline annotations (IrStmt.for_.num_stages/order/stage/group)
 *    and multi-buffering (IrBuffer.stages);
 *  - communication ops (TS_OP_PUT, TS_OP_WAIT, ...) in the tile-op table
 *    (op/op.h) for the distributed layer.
 *
 * Nodes are allocated from the kernel's arena; passes build new nodes
 * rather than mutating shared ones unless the pass owns the node.
 */
#ifndef TS_IR_H
#define TS_IR_H

#include "base/base.h"

typedef struct IrExpr IrExpr;
typedef struct IrStmt IrStmt;
typedef struct IrVar IrVar;
typedef struct IrBuffer IrBuffer;
typedef struct IrLayout IrLayout;
typedef struct IrKernel IrKernel;

/* ---- expressions ------------------------------------------------------- */

/* Binary operators.  X(enum, C spelling, printer spelling).
 * DIV on integers truncates (C and TIR `Div`); FLOORDIV/FLOORMOD follow
 * Python's `//` and `%`.  Comparisons and logical ops yield bool. */
#define IR_BINOPS(X)                                                          \
    X(IR_ADD, "+", "+") X(IR_SUB, "-", "-") X(IR_MUL, "*", "*")                \
    X(IR_DIV, "/", "/") X(IR_FLOORDIV, "//", "//") X(IR_FLOORMOD, "%", "%")   \
    X(IR_MIN, "min", "min") X(IR_MAX, "max", "max")                           \
    X(IR_EQ, "==", "==") X(IR_NE, "!=", "!=") X(IR_LT, "<", "<")              \
    X(IR_LE, "<=", "<=") X(IR_GT, ">", ">") X(IR_GE, ">=", ">=")              \
    X(IR_AND, "&&", "and") X(IR_OR, "||", "or")                               \
    X(IR_BITAND, "&", "&") X(IR_BITOR, "|", "|") X(IR_BITXOR, "^", "^")       \
    X(IR_SHL, "<<", "<<") X(IR_SHR, ">>", ">>") X(IR_POW, "pow", "**")

typedef enum IrBinOp {
#define X(e, c, p) e,
    IR_BINOPS(X)
#undef X
    IR_BINOP_COUNT
} IrBinOp;

/* Math intrinsics: X(enum, name in T.*, arity). */
#define IR_INTRINSICS(X)                                                       \
    X(IR_EXP, "exp", 1) X(IR_EXP2, "exp2", 1) X(IR_LOG, "log", 1)              \
    X(IR_LOG2, "log2", 1) X(IR_SQRT, "sqrt", 1) X(IR_RSQRT, "rsqrt", 1)        \
    X(IR_ABS, "abs", 1) X(IR_SIN, "sin", 1) X(IR_COS, "cos", 1)                \
    X(IR_TANH, "tanh", 1) X(IR_FLOOR, "floor", 1) X(IR_CEIL, "ceil", 1)        \
    X(IR_ROUND, "round", 1) X(IR_SIGMOID, "sigmoid", 1) X(IR_LOG1P, "log1p", 1) \
    X(IR_EXP10, "exp10", 1) X(IR_ISINF, "isinf", 1) X(IR_ISNAN, "isnan", 1)    \
    X(IR_FMOD, "fmod", 2) X(IR_POWF, "pow", 2) X(IR_ATAN2, "atan2", 2)         \
    X(IR_ERF, "erf", 1) X(IR_TRUNC, "trunc", 1)                               \
    /* thread-level: the value `a` held by lane (this lane ^ b) of the warp */ \
    X(IR_SHFL_XOR, "shfl_xor", 2)                                               \
    /* the bits of `a` read as the call's dtype, of the same width (T.reinterpret) */ \
    X(IR_REINTERPRET, "reinterpret", 1)                                        \
    /* warp primitives (T.shfl_*, T.ballot_sync, T.warp_reduce_*; op/comm.h,  \
     * ts_warp_call): the value operand in its own dtype (any), the result    \
     * in it; lanes of 32-thread warps of the flat thread index; shuffles:   \
     * (value, lane or delta, width, lane mask), ballot: (mask, predicate) */ \
    X(IR_WARP_SHFL, "warp.shfl", 4) X(IR_WARP_SHFL_UP, "warp.shfl_up", 4)      \
    X(IR_WARP_SHFL_DOWN, "warp.shfl_down", 4)                                 \
    X(IR_WARP_SHFL_XOR, "warp.shfl_xor", 4) X(IR_WARP_BALLOT, "warp.ballot", 2) \
    X(IR_WARP_SUM, "warp.sum", 1) X(IR_WARP_MAX, "warp.max", 1)               \
    X(IR_WARP_MIN, "warp.min", 1) X(IR_WARP_BAND, "warp.bitand", 1)           \
    X(IR_WARP_BOR, "warp.bitor", 1) X(IR_WARP_SYNC, "warp.sync", 1)           \
    /* T.thread_return(): the calling thread ends (an IR_S_EVAL of it only) */ \
    X(IR_THREAD_RETURN, "thread_return", 0)                                   \
    /* T.set_max_nreg(count, inc) and its aliases (an IR_S_EVAL of it only):  \
     * the executing warp group's register budget becomes `count` (constant, \
     * 24..256, a multiple of 8), raised (inc 1) or lowered (inc 0); the     \
     * statement stays for sm_90a (setmaxnreg), pass arch_hints drops it    \
     * for every other architecture and target */                          \
    X(IR_SET_MAX_NREG, "set_max_nreg", 2)                                    \
    /* T.sync_grid(): every thread of the grid waits for all (an IR_S_EVAL of \
     * it; pass split_grid makes one at the top level the boundary of two   \
     * kernels of the chain where it can, else the kernel cooperative: a     \
     * grid barrier printed by the targets, IrKernel.cooperative) */         \
    X(IR_SYNC_GRID, "sync_grid", 0)                                            \
    /* the int64 address of the launch's grid workspace (IrKernel.grid_ws_bytes, \
     * zeroed by the launch: the grid barrier's words, then the block        \
     * collectives' staging; a T.make_tensor-style IrBuffer.addr binds it)   */ \
    X(IR_GRID_WS, "grid_workspace", 0)                                          \
    /* T.block_rank_in_cluster(): the block's rank in its thread block cluster \
     * (IrKernel.cluster), int32; pass lower_cluster keeps it only for a     \
     * target with clusters (CUDA sm_90+: %cluster_ctarank) and writes the    \
     * same number from the block indices elsewhere */                       \
    X(IR_CLUSTER_RANK, "cluster.rank", 0)                                       \
    /* T.wait_wgmma(n) (an IR_S_EVAL of it only): the warpgroup waits until at \
     * most n of its wgmma groups are pending (T.wgmma_gemm issues without   \
     * waiting); pass arch_hints keeps it only in kernels with wgmma gemms   \
     * (TS_OP_INST_WGMMA), where it is wgmma.wait_group n; pass wgmma_waits  \
     * lists the accumulators it completes (IrStmt eval.done) */              \
    X(IR_WGMMA_WAIT, "wait_wgmma", 1)                                         \
    /* T.call_extern(dtype, "name", args...): a call of a device function of \
     * the kernel's imported CUDA source (IrKernel.extern_src), args[0] the   \
     * name (an IR_E_STRING), args[1..] its arguments; any number of them    \
     * (arity -1).  An IR_S_EVAL of it is a call statement (its dtype and    \
     * return value unused); elsewhere its value, of the call's dtype.  The  \
     * CUDA target prints it as written; the C target and the interpreters  \
     * refuse a kernel with one (they cannot run CUDA source) */            \
    X(IR_EXTERN_CALL, "extern.call", -1)                                      \
    /* T.access_ptr(buf, ...) / T.address_of(buf[i]) as an argument of an    \
     * extern call: the address of the element args[0] (an IR_E_LOAD of a     \
     * local buffer, which the call may read and write through it); dtype     \
     * uint64.  Only inside IR_EXTERN_CALL */                                 \
    X(IR_EXTERN_ADDR, "extern.addr", 1)                                        \
    /* T.fence_proxy_async() (an IR_S_EVAL of it only): the thread's shared      \
     * memory accesses ordered with the async proxy's (wgmma's operand reads);   \
     * pass arch_hints keeps it only in kernels with wgmma gemms */              \
    X(IR_FENCE_PROXY_ASYNC, "fence_proxy_async", 0)

typedef enum IrIntrinsic {
#define X(e, n, a) e,
    IR_INTRINSICS(X)
#undef X
    IR_INTRINSIC_COUNT
} IrIntrinsic;

typedef enum IrExprKind {
    IR_E_INT,    /* ival (dtype int32/int64/bool/...) */
    IR_E_FLOAT,  /* fval (dtype float*) ; +-inf allowed */
    IR_E_VAR,    /* var */
    IR_E_LOAD,   /* buf[idx[0..nidx)] */
    IR_E_BIN,    /* binop(a, b) */
    IR_E_NEG,    /* -a */
    IR_E_NOT,    /* !a (bool) / ~a on ints: see `bitnot` */
    IR_E_SELECT, /* cond ? a : b   (T.if_then_else; only the taken side is evaluated) */
    IR_E_CAST,   /* (dtype) a */
    IR_E_CALL,   /* intrinsic(args) */
    IR_E_STRING, /* str: only as an argument of T.print and friends */
} IrExprKind;

struct IrExpr {
    IrExprKind kind;
    TsDType dt;
    TsLoc loc;
    union {
        int64_t ival;
        double fval;
        IrVar *var;
        const char *str;
        /* bits 1: the element's stored bits as the unsigned integer of the
         * same width (dt is that integer type), never converted through the
         * buffer's dtype (a NaN's payload survives): made by resolve_views
         * for views of another dtype (ir_load_bits).
         * acquire (pass poll_marks): a polling load of global memory another
         * agent (block, rank) writes, inside a while loop of a blocking
         * kernel: read anew each time, never hoisted, and what the writer
         * released before its store is seen after it (CUDA: a volatile
         * load, the loop's `acquire` fence after it; C: an __atomic acquire
         * load) */
        struct { IrBuffer *buf; IrExpr **idx; int nidx; int bits; bool acquire; } load;
        struct { IrBinOp op; IrExpr *a, *b; } bin;
        struct { IrExpr *a; int bitnot; } un;        /* NEG, NOT, CAST */
        struct { IrExpr *cond, *a, *b; } sel;
        struct { IrIntrinsic fn; IrExpr **args; int nargs; } call;
    };
};

/* ---- variables ----------------------------------------------------------- */

typedef enum IrVarKind {
    IR_VAR_LOOP,       /* a loop variable */
    IR_VAR_BLOCK_IDX,  /* bx/by/bz of T.Kernel: `axis` says which */
    IR_VAR_THREAD_IDX, /* T.get_thread_binding(axis) */
    IR_VAR_SHAPE,      /* a run-time shape variable (T.dynamic / T.symbolic) */
    IR_VAR_SCALAR,     /* a scalar kernel parameter (e.g. `n: T.int32`) */
    IR_VAR_LET,        /* bound once by IR_S_LET */
    IR_VAR_RANK,       /* distributed: axis 0 rank id, 1 number of ranks, 2 ranks per node (lower_comm) */
} IrVarKind;

struct IrVar {
    const char *name;
    int id;         /* unique within the kernel; codegen names it name_id if needed */
    TsDType dt;
    IrVarKind kind;
    int axis;       /* BLOCK_IDX / THREAD_IDX axis; SCALAR: parameter index; LET with
                       grid_perm: the grid axis */
    bool grid_perm; /* LET: its values are the block indices of grid axis `axis`, renumbered
                       (rasterize's bx/by: a bijection of the grid), so it has that block
                       index's range, 0 .. grid[axis] - 1 (the arithmetic analysis uses it) */
};

/* ---- buffers --------------------------------------------------------------- */

typedef enum IrScope {
    IR_SCOPE_GLOBAL,   /* device memory: kernel tensor parameters */
    IR_SCOPE_SHARED,   /* T.alloc_shared: shared by the threads of a block */
    IR_SCOPE_FRAGMENT, /* T.alloc_fragment: registers spread over the block's threads */
    IR_SCOPE_LOCAL,    /* T.alloc_local: registers private to one thread */
    IR_SCOPE_VAR,      /* T.alloc_var: one scalar in a register */
    IR_SCOPE_TMEM,     /* T.alloc_tmem: Blackwell tensor memory (a tile held for the block, written by
                          tcgen05 gemms and T.copy); only before pass lower_tmem, which places it
                          (doc/LANGUAGE.md "Tensor memory") */
} IrScope;
const char *ir_scope_name(IrScope s);

/* Shared-memory swizzle, set by layout inference or T.annotate_layout. */
typedef enum IrSwizzleKind {
    IR_SWIZZLE_NONE,
    IR_SWIZZLE_XOR,    /* 16-byte chunks XORed by row: bits/base/shift below */
} IrSwizzleKind;

typedef struct IrSwizzle {
    IrSwizzleKind kind;
    int bits, base, shift; /* CuTe's Swizzle<B, M, S> parameters */
    /* Column blocks (the wgmma operand layout, doc/HOPPER.md): when lblk > 0 the
     * matrix of the last two axes (rows x 2^lcols elements) is stored as
     * 2^(lcols - lblk) blocks of rows x 2^lblk, one after the other, each
     * row-major, before the XOR applies (ir_swizzle_apply); 0: plain rows. */
    int lblk, lcols;       /* log2 of the block's and the matrix's columns (elements) */
    int64_t rows;          /* the matrix's rows (blocked only) */
} IrSwizzle;

/*
 * A fragment layout: for an element at logical indices (i0..in), which
 * thread holds it and at which index of that thread's local array.  Both
 * are expressions over the placeholder vars `in[0..ndim)` (and the
 * replicate var `rep` when the fragment is replicated over threads).
 * Filled in by the CUDA backend's layout inference; NULL on the C target.
 */
/* The families of fragment layouts layout.c builds (IrLayout.kind); the
 * parameters p[] say which member (see layout.h). */
typedef enum IrLayoutKind {
    IR_LAYOUT_MMA_C,    /* mma.sync m16n8 accumulator tile: p = m, n, wm, wn */
    IR_LAYOUT_MMA_ROWS, /* the rows of an MMA_C tile (its row projection): p = m, n, wm, wn */
    IR_LAYOUT_CYCLIC,   /* row-major element e -> thread e % p[0], local e / p[0] */
    IR_LAYOUT_WARP_ROWS,/* rows in blocks over warps, columns over lanes: p = m, n, warps, vector */
    IR_LAYOUT_WARP_ROWS_PROJ, /* the rows of a WARP_ROWS tile, on the lanes sharing each: p = m, n, warps, vector */
    IR_LAYOUT_MMA_A,    /* a register A operand of an mma.sync gemm on wm x wn warps: MMA_C(m, k, wm, 1)
                         * per warp row, replicated on the wn warps of the row: p = m, k, wm, wn */
    IR_LAYOUT_WGMMA_C,  /* the accumulator of wgmma.mma_async m64nNk16 over gm x gn warpgroups:
                         * p = m, n, gm, gn */
} IrLayoutKind;

struct IrLayout {
    IrLayoutKind kind;   /* which family (layout.h) */
    int64_t p[4];        /* its parameters */
    int64_t shape[4];    /* the logical shape it covers (ndim extents) */
    int64_t local_shape[4]; /* extents of the nlocal local-index digits (row-major) */
    int ndim;
    IrVar **in;          /* placeholder variables for the logical indices */
    IrExpr *thread;      /* thread id holding the element */
    int nlocal;          /* number of local-index dimensions */
    IrExpr **local;      /* the local index within that thread */
    int64_t local_size;  /* elements per thread */
    int replicate;       /* threads holding a copy of each element (1: none) */
    IrVar *rep;          /* replicate placeholder or NULL */
    /* The inverse: which element thread `tv_thread` holds at local digits
     * `tv_digit[0..nlocal)` (one expression per logical dimension), over
     * placeholder vars; for a replicated layout every replica gives the
     * same element.  (`local[]` above gives the digits of the forward map.)
     * `nthreads` is the size of the thread range the layout covers.
     * Layouts made by layout.c have both directions (checked equal by
     * enumeration in ir_layout_check). */
    IrVar *tv_thread, **tv_digit;
    IrExpr **index;
    int nthreads;
    const char *origin;  /* what fixed it ("mma.sync C", "loop", ...), for messages */
};

struct IrBuffer {
    const char *name;
    int id;              /* unique within the kernel */
    TsDType dt;
    IrScope scope;
    int ndim;
    IrExpr **shape;      /* ndim extents; constants except for global buffers */
    IrExpr **strides;    /* global: element strides (run-time vars); others NULL = row-major */
    int param;           /* kernel parameter index for global buffers, else -1 */
    IrLayout *layout;    /* fragment layout (CUDA backend) */
    IrSwizzle swizzle;   /* shared-memory swizzle */
    int swizzle_annotated; /* 1: T.annotate_layout fixed `swizzle` (none included); passes keep it */
    int stages;          /* multi-buffering copies made by pipelining (1: none) */
    /* A global parameter without declared strides that the CUDA lowering
     * reads with vector copies: the kernel takes it as row-major compact
     * (strides are products of the extents, printed as such) with its
     * data `align`-byte aligned; the launch checks both (a launch on host
     * tensors passes a compact copy instead).  0 / 0 elsewhere. */
    int contiguous;      /* 1: compact row-major assumed (see above) */
    int align;           /* byte alignment of the data assumed (contiguous only); a per-thread
                            buffer (local, var): the alignment its array is declared with, set
                            where an external function takes its address (T.access_ptr), 0: the
                            element's */
    /* Where a shared buffer (or a fragment left in shared memory) lives in
     * the block's dynamic shared memory, decided by the CUDA pass plan_smem
     * (IrKernel.smem_planned); buffers whose live ranges do not overlap may
     * share bytes.  0 before the pass and for other buffers. */
    int64_t smem_offset; /* byte offset */
    int64_t smem_bytes;  /* bytes it occupies (padding and stages included) */
    int row_pad;         /* elements added to each row's stride (plan_smem: bank-conflict padding) */
    int smem_align;      /* bytes plan_smem aligns its start to (a wgmma operand's swizzle
                            repeat, gemm.c); 0: TS_CUDA_SMEM_ALIGN */
    /* A view (T.reshape, T.view(shape=), T.Tensor(shape, dtype, buf.data)):
     * another name, with its own shape, for the storage of `base` (never a
     * view itself).  The index map is row-major reinterpretation: element e
     * of the view in row-major order is element e of `base` (same dtype,
     * same element count; ir_view_index).  A view has no alloc statement
     * and no storage; the pass resolve_views, right after lower_tile_ops,
     * rewrites every access through it into an access of `base`, so that
     * layout inference, plan_smem, the targets and the interpreters see one
     * storage.  NULL for a buffer with its own storage. */
    IrBuffer *base;
    /* 1: the tensor parameter of a T.alloc_global workspace: constant shape,
     * row-major, allocated by the launch (not zero-filled, as TileLang's)
     * and freed after the chain ran; the caller passes no argument for it.
     * Workspaces are the last parameters of a kernel (after the caller's). */
    int workspace;
    /* 1: compiler scratch (layout inference's cross-warp reduction
     * buffer) whose contents do not outlive one run of the statement list
     * holding its alloc statement: every run writes what it reads, so
     * plan_smem may give its bytes to other buffers between runs (inside a
     * loop body, from one iteration to the next).  0: the contents persist
     * for the whole kernel, as TileLang's buffers do wherever allocated. */
    int transient;
    /* T.alloc_barrier: a shared buffer of uint64 mbarrier objects (8 bytes
     * each, placed by plan_smem like any shared buffer), element i expecting
     * mbar_count[i] arrivals per phase; touched only by IR_S_MBAR
     * statements.  NULL for every other buffer. */
    int *mbar_count;
    /* T.make_tensor(ptr, shape, dtype): global memory that is not a kernel
     * parameter, at the run-time address this int64 variable holds (bound
     * by the IR_S_LET made where the buffer was made; every access comes
     * after it): constant shape, row-major constant `strides`, param -1.
     * The C and CUDA targets index it through a cast of the address; the
     * interpreters refuse it (they have no addresses).  NULL elsewhere. */
    IrVar *addr;
    TsLoc loc;           /* where it was declared */
};

/* A rectangular region of a buffer: start[i] .. start[i] + extent[i]. */
typedef struct IrRegion {
    IrBuffer *buf;
    int ndim;            /* == buf->ndim */
    IrExpr **start;
    IrExpr **extent;
} IrRegion;

/* ---- statements -------------------------------------------------------------- */

typedef enum IrForKind {
    IR_FOR_SERIAL,     /* T.serial / range */
    IR_FOR_PARALLEL,   /* T.Parallel: iterations independent, mapped to threads */
    IR_FOR_PIPELINED,  /* T.Pipelined: serial, with num_stages software pipelining */
    IR_FOR_UNROLL,     /* T.unroll */
    IR_FOR_VECTORIZED, /* T.vectorized */
    IR_FOR_THREAD,     /* thread-level IR: bound to a thread range.  Iteration
                          v (min <= v < min + extent) is run by the thread whose
                          flat index is v, once; threads outside the range skip
                          the body.  A range smaller than the block is a thread
                          role (warp specialization); barriers may not appear
                          inside one. */
} IrForKind;
const char *ir_for_kind_name(IrForKind k);

typedef enum IrStmtKind {
    IR_S_SEQ,      /* seq.v[0..n) */
    IR_S_FOR,      /* for_ */
    IR_S_IF,       /* if_ (else may be NULL) */
    IR_S_WHILE,    /* while_ */
    IR_S_BREAK,
    IR_S_CONTINUE,
    IR_S_STORE,    /* store: buf[idx] = value */
    IR_S_LET,      /* let: var = value, visible to the rest of the enclosing SEQ */
    IR_S_ALLOC,    /* alloc: declares a non-global buffer for the rest of the block */
    IR_S_TILEOP,   /* op: a tile operator (op/op.h) */
    IR_S_EVAL,     /* eval: an expression for its effect (T.print lowers to this) */
    IR_S_PRINT,    /* print: T.print(value or buffer, msg) */
    IR_S_ATOMIC_ADD, /* store: buf[idx] += value, atomically w.r.t. other
                        blocks/threads (lowered T.atomic_add); uses `store` */
    /* Thread-level statements: made by the CUDA passes, and by the
     * elaborator only for the program's own asynchronous copies
     * (T.ptx_cp_async: IR_S_VCOPY with vcopy.user; T.ptx_commit_group /
     * T.ptx_wait_group).  Their meaning is per thread (SPMD): every thread of
     * the block runs the statement list with its own flat thread index. */
    IR_S_BARRIER,     /* barrier: every thread of the block waits (bar.sync) */
    IR_S_VCOPY,       /* vcopy: `lanes` consecutive elements moved by one thread */
    IR_S_ASYNC_COMMIT,/* close the group of async copies issued so far */
    IR_S_ASYNC_WAIT,  /* async_wait: wait until at most `pending` groups are in flight */
    /* Warp specialization (src/elab/barrier_builtins.c has the essay).  Made by the
     * elaborator (T.alloc_barrier, T.mbarrier_*, T.barrier_*, T.ws). */
    IR_S_MBAR,        /* mbar: an operation on one mbarrier object */
    IR_S_ROLE,        /* role: T.ws -- only threads [lo, lo + n) run the body, as
                         the uniform code of that group (tile ops inside are
                         the group's collective work) */
} IrStmtKind;

/* IR_S_BARRIER ids of the C target's coroutine kernels (see barrier): the
 * block's, then one per warp a T.ws role may start at (1024 threads). */
#define IR_C_BAR_BLOCK 16
#define IR_C_BAR_END (IR_C_BAR_BLOCK + 1 + 32)
/* Signal buffers (heap tensors that ranks of other nodes add to through
 * NCCL's GIN signals, ir/tileop.h TsGinForm) a kernel may have. */
#define IR_GIN_MAX_SIG 8

/* The operations of IR_S_MBAR (PTX ISA, "mbarrier"): an mbarrier counts
 * the arrivals still expected in its current phase (and, on sm_90, bytes
 * of asynchronous transactions); when both reach zero the phase completes,
 * its parity flips and the count starts again from the init value. */
typedef enum IrMbarOp {
    IR_MBAR_INIT,      /* expect `value` arrivals per phase, phase 0 (one thread, before any use) */
    IR_MBAR_ARRIVE,    /* one arrival of each executing thread */
    IR_MBAR_EXPECT_TX, /* the current phase also waits for `value` more bytes of transactions (sm_90) */
    IR_MBAR_WAIT,      /* wait until the phase of parity `value` (0/1) has completed */
    IR_MBAR_ARRIVE_ASYNC, /* one arrival of each executing thread, and the phase completes only
                             once every async copy (IR_S_VCOPY.async) the thread issued before
                             has landed (CUDA, sm_80: cp.async.mbarrier.arrive, then the arrive;
                             made by pass ws_async_copy) */
    IR_MBAR_ARRIVE_ONE,   /* one arrival in all for the group that runs it (its uniform code), not one per
                             thread: the arrive an asynchronous unit makes when its work is done
                             (tcgen05.commit's: T.tcgen05_mma_arrive, and pass lower_tmem after the gemm
                             that stands for a T.tcgen05_gemm's work); partition_threads gives it to one
                             thread as an ARRIVE */
} IrMbarOp;
const char *ir_mbar_op_name(IrMbarOp op);

typedef struct IrTileOp IrTileOp; /* defined in ir/tileop.h */

typedef struct IrStmtList {
    IrStmt **v;
    int n, cap;
} IrStmtList;

struct IrStmt {
    IrStmtKind kind;
    TsLoc loc;
    union {
        IrStmtList seq;
        struct {
            IrVar *var;
            IrExpr *min, *extent;
            IrForKind kind;
            IrStmt *body;
            /* T.Pipelined annotations (0 / NULL when absent) */
            int num_stages;
            int *order, *stage, norder;     /* per-statement order/stage lists */
        } for_;
        struct { IrExpr *cond; IrStmt *then, *else_; } if_;
        /* acquire (set by partition_threads in kernels that wait on other
         * blocks): after the loop, each thread sees what the blocks it
         * waited for wrote before their flag (CUDA: a __threadfence()).
         * poll (pass poll_marks): the loop may wait for a write of another
         * agent: it reads global memory in a blocking kernel (another block
         * or rank), or it is a loop of a C thread_coro kernel (another
         * thread of the block); the C target yields to its scheduler every
         * iteration, so that the writer runs */
        struct { IrExpr *cond; IrStmt *body; bool acquire; bool poll; } while_;
        /* bits 1: value is an unsigned integer of the buffer's dtype width
         * whose bits are stored as they are (ir_store_bits; see load.bits).
         * release (STORE only, pass poll_marks): a store to global memory of
         * a blocking kernel, which another block or rank may poll for: what
         * the thread wrote before is visible first (CUDA: __threadfence(),
         * then a volatile store; C: an __atomic release store) */
        struct { IrBuffer *buf; IrExpr **idx; int nidx; IrExpr *value; int bits; bool release; } store;
        struct { IrVar *var; IrExpr *value; } let;
        struct { IrBuffer *buf; } alloc;
        IrTileOp *op;
        /* done (a T.wait_wgmma only, pass wgmma_waits): the accumulators of
         * the wgmma groups the wait may complete, ndone of them; the CUDA
         * printer fences their registers after the wait (NULL / 0: none) */
        struct { IrExpr *e; IrBuffer **done; int ndone; } eval;
        struct { IrExpr *value; IrBuffer *buf; const char *msg; } print;
        /* VCOPY: dst[didx .. +lanes) = src[sidx .. +lanes) along the last
         * dimension of both (contiguous there).  When `pred` (may be NULL:
         * always) is false: nothing is read; a non-global dst gets zeros, a
         * global dst is left alone.  `async`: a cp.async copy (global ->
         * shared), complete only after its group is waited for.  A
         * converting copy: dst and src of different dtypes (float32 and
         * float16 or bfloat16, never async), each element rounded to dst's
         * dtype as a cast would (ir_vcopy_converts). */
        struct {
            IrBuffer *dst, *src;
            IrExpr **didx, **sidx;
            int ndi, nsi;
            int lanes;
            int async;
            IrExpr *pred;
            /* 1: the lowering proved every vector contiguous and aligned
             * (a global operand is `contiguous` with `align` >= the vector's
             * bytes): one move, no run-time test; 0: the printer tests a
             * global operand's strides and alignment per vector */
            int aligned;
            /* 1 (pass split_address): each index of the global operand is
             * `base + step` (an IR_ADD node): base the terms that stay the
             * same across the copy's enclosing loops, step the rest.  The
             * CUDA printer adds the two flattened parts to the pointer
             * apart, so that NVVM sees one base address per thread instead
             * of re-deriving it from every unrolled copy's sum */
            int split;
            /* 1: written by the program (T.ptx_cp_async, always async): its
             * groups, waits and mbarrier arrivals are the program's own, not
             * a pipelining pass's */
            int user;
        } vcopy;
        struct { int pending; } async_wait;
        /* BARRIER: id 0 is the whole block's (__syncthreads); id 1..15 a named
         * barrier (bar.sync id, count) of `count` threads: T.sync_threads(id,
         * count), or insert_sync's barrier inside a T.ws role.  idv: an id
         * computed at run time (TileScale's DeepEP: T.sync_threads(
         * responsible_rank, 96)), then `id` is 15, the largest it may be.
         * unaligned: its threads may reach it from different instructions
         * (each unit's role has its own copy of a barrier of the whole
         * block; a run-time id chosen per thread): set by insert_sync and
         * printed as PTX `barrier.sync`, not `bar.sync`, which is
         * barrier.sync.aligned and needs every thread at the same
         * instruction (PTX ISA, "barrier").
         * Ids IR_C_BAR_BLOCK and up are the C target's own, in thread_coro
         * kernels only (pass coro_sync_c): around the block's uniform code
         * (IR_C_BAR_BLOCK, count 0: every live thread) and a T.ws role's
         * (IR_C_BAR_BLOCK + 1 + the role's first warp, count: its threads).
         * async_fence: the threads first order their shared-memory writes
         * for the async proxy (fence.proxy.async: wgmma reads the tiles after
         * the barrier; pass arch_hints sets it on the block barriers of
         * kernels with wgmma gemms, doc/HOPPER.md).
         * release (a block barrier, id 0, of a blocking kernel; pass
         * poll_marks): every thread's global writes are visible to other
         * blocks before any thread passes, so that a flag one thread stores
         * after it follows the block's data (CUDA: __threadfence() first;
         * the C target needs nothing more: its blocking kernels' global
         * stores are release stores each) */
        struct { int id, count; IrExpr *idv; bool unaligned; bool async_fence; bool release; } barrier;
        /* MBAR: `op` on element buf[idx] of a T.alloc_barrier buffer; value:
         * INIT's count, EXPECT_TX's bytes, WAIT's parity (NULL for ARRIVE);
         * noinc (ARRIVE_ASYNC only): the arrival made when the copies have
         * landed is the thread's one arrival, with no arrive of its own
         * after it (CUDA: cp.async.mbarrier.arrive.noinc alone; pass
         * ws_async_copy sets it only where the thread has no other writes
         * for the arrive to release) */
        struct { IrMbarOp op; IrBuffer *buf; IrExpr *idx; IrExpr *value; bool noinc; } mbar;
        /* ROLE: threads lo .. lo + n - 1 (flat index) run body; the others
         * skip it.  `id` numbers the kernel's roles from 1 (the named barrier
         * insert_sync uses inside it).  solo (C target, pass coro_sync_c,
         * thread_coro kernels only): body is the uniform code of threads
         * [lo, lo + n) - the block's (id 0) or a role's - and thread lo
         * alone runs it for them (an mbarrier arrive in it counts n) */
        struct { int lo, n, id; IrStmt *body; bool solo; } role;
    };
};

/* ---- kernels ------------------------------------------------------------------ */

typedef struct IrParam {
    const char *name;
    IrBuffer *buf;     /* tensor parameter, or NULL */
    IrVar *var;        /* scalar parameter, or NULL */
    int is_output;     /* in @tilelang.jit(out_idx=...) */
} IrParam;

struct IrKernel {
    const char *name;         /* the prim_func's name */
    TsArena *arena;           /* where its nodes live */
    TS_VEC(IrParam) params;
    TS_VEC(IrVar *) shape_vars; /* run-time shape variables, in order of appearance */
    int ngrid;                /* 1..3 */
    IrExpr *grid[3];          /* grid extents (x, y, z); missing ones are 1 */
    IrVar *block_idx[3];      /* bx, by, bz */
    int threads[3];           /* threads per block (x, y, z) */
    int cluster[3];           /* T.ClusterKernel(cluster_dims=...): blocks per thread block cluster
                                 (x, y, z; each divides the grid's extent), all 0 for no cluster;
                                 the CUDA target prints __cluster_dims__ (sm_90+, pass lower_cluster) */
    TsLoc cluster_loc;        /* where the cluster was asked for */
    IrStmt *body;             /* the kernel body, run by each block */
    TS_VEC(IrBuffer *) buffers; /* every buffer, global ones first */
    int next_id;              /* id counter for vars and buffers */
    /* Facts recorded by annotations, used by the CUDA backend. */
    int swizzle_panel;        /* T.use_swizzle(panel_size) or 0 */
    bool swizzle_col;         /* T.use_swizzle(..., order="col"): panels of block columns */
    bool may_block;           /* waits on other blocks/ranks: run blocks as coroutines */
    bool cooperative;         /* pass split_grid: the kernel's blocks wait for each other at grid
                                 barriers (T.sync_grid statements left in the body, block-scale
                                 collectives): CUDA launches it with cuLaunchCooperativeKernel after
                                 checking every block can be resident; the C target runs its blocks as
                                 coroutines.  Not may_block: the grid barrier's own fences order
                                 global memory, the rest of the kernel is compiled as usual */
    int64_t grid_ws_bytes;    /* bytes of the launch's grid workspace (IR_GRID_WS), 0 for none:
                                 TS_GRID_BAR_BYTES of barrier words (split_grid) + the staging of
                                 block-scale collectives (lower_coll); the launch zeroes it */
    bool thread_coro;         /* C target: the block's threads run as coroutines, not in
                                 program order (pass thread_loops_c decides; sched_c.c) */
    bool index32;             /* every signed integer the kernel computes provably fits in int32
                                 (pass index_width): the CUDA target computes them in 32 bits */
    bool fast_math;           /* @tilelang.jit(pass_configs={TL_ENABLE_FAST_MATH: True}): math
                                 intrinsics may use the hardware approximations (CUDA: exp2 as
                                 ex2.approx.ftz, float division by rcp.approx.ftz; subnormal
                                 results flushed to zero) */
    bool user_sync;           /* @tilelang.jit(pass_configs={TL_DISABLE_THREAD_STORAGE_SYNC: True}):
                                 the program orders its threads' shared-memory accesses itself
                                 (TileLang then inserts no barriers): insert_sync still adds the
                                 barriers tile-level code needs, but trusts thread-level accesses
                                 it cannot prove apart instead of refusing them */
    /* T.import_source(src): external CUDA source the kernel's T.call_extern
     * calls (device functions), each text once, in the order first imported;
     * the CUDA target prints them before the kernel.  extern_loc: the first
     * T.import_source or T.call_extern (where the C target and the
     * interpreters, which cannot run CUDA source, refuse the kernel); no
     * file when the kernel has neither. */
    TS_VEC(const char *) extern_src;
    TsLoc extern_loc;
    const char *layout_note;  /* why layout_inference left fragments in shared memory, or NULL */
    int ptxas_reg_level;      /* layout_inference: the ptxas --register-usage-level the CUDA target
                                 asks for (tensor-core loops in registers), 0 for ptxas's default */
    int min_blocks;           /* ws_role_regs: blocks per SM the CUDA target compiles the kernel for
                                 (__launch_bounds__'s second argument); pass arch_hints sets
                                 TsCaps.min_blocks where no pass chose; 0: none */
    bool ptxas_fast_compile;  /* inject_pipeline: the CUDA target asks ptxas for its fast-compile
                                 level (-Ofc=min) where TsCaps.ptxas_fast (opt-in) says so for
                                 this kernel's pipelined tensor-core loop */
    int tier_mmas;            /* tier_plan: mma.sync per warp in the kernel's unrolled loop bodies,
                                 its gemms' m*n*k / (16*8*16) over the warps (a gemm inside a loop
                                 counts once): the estimate of how long a cold NVRTC build takes */
    bool tier_large;          /* tier_plan: tier_mmas >= 128 (TIER_LARGE_MMAS): the runtime builds a
                                 quick tier first by default (TsCompileOptions.tiered) */
    bool multinode;           /* lower_comm: compiled for a world of several nodes (TsCaps.multinode):
                                 accesses to other nodes are IrTileOp.xport ops; targets declare
                                 the ranks-per-node argument and the transport */
    int gin_nsig;             /* lower_comm, CUDA, several nodes: how many signal buffers (TsGinForm)
                                 the kernel has; the world maps each to GIN signals at launch */
    int gin_sig_param[IR_GIN_MAX_SIG]; /* their parameter indices, by slot */
    bool gemm_k_rolled;       /* tier_plan, quick tier (TsCaps.quick_tier): the k16 steps of each
                                 tensor-core gemm stay a loop in the CUDA code (#pragma unroll 1) */
    bool nvrtc_fast_compile;  /* tier_plan, quick tier: NVRTC compiles at --Ofast-compile=min as a
                                 whole (NVVM and ptxas), a trade of kernel time for compile time */
    int cp_async_l2_prefetch; /* inject_pipeline: the L2 prefetch size in bytes (64, 128, 256) that
                                 the kernel's 16-byte cp.async copies ask for (TsCaps.l2_prefetch,
                                 kept only where the kernel has asynchronous copies), 0 for none */
    bool smem_planned;        /* plan_smem ran: IrBuffer.smem_offset/smem_bytes/row_pad are set */
    int64_t smem_bytes;       /* plan_smem: dynamic shared memory per block, bytes */
    IrVar *tid;               /* thread-level IR: the flat thread index (0 .. threads-1),
                                 made by ir_kernel_tid; NULL before the CUDA passes */
    /* A prim_func with several `with T.Kernel` blocks is a chain of kernels
     * launched one after another with the same parameters (the same
     * IrParam/IrBuffer objects): this is the next one, or NULL. */
    IrKernel *next;
};

/* The kernel imports CUDA source or calls an external function
 * (T.import_source / T.call_extern): only the CUDA target can run it. */
static inline bool ir_kernel_has_extern(const IrKernel *k) { return k->extern_loc.line > 0; }

/* The grid barrier's words at the start of a grid workspace (IR_GRID_WS):
 * an arrival count and a generation (32-bit each), padded so the block
 * collectives' staging after them is 64-byte aligned. */
#define TS_GRID_BAR_BYTES 64

/* ---- construction (ir.c) --------------------------------------------------------- */

IrKernel *ir_kernel_new(TsArena *a, const char *name);
IrVar *ir_var(IrKernel *k, const char *name, TsDType dt, IrVarKind kind);
/* The flat thread index variable of k (created on first use). */
IrVar *ir_kernel_tid(IrKernel *k);
/* Threads per block: threads[0] * threads[1] * threads[2]. */
int64_t ir_kernel_nthreads(const IrKernel *k);
IrBuffer *ir_buffer(IrKernel *k, const char *name, TsDType dt, IrScope scope,
                    int ndim, IrExpr **shape, TsLoc loc);

IrExpr *ir_int(TsArena *a, int64_t v, TsDType dt);
IrExpr *ir_i32(TsArena *a, int64_t v);
IrExpr *ir_float(TsArena *a, double v, TsDType dt);
IrExpr *ir_var_ref(TsArena *a, IrVar *v);
IrExpr *ir_load(TsArena *a, IrBuffer *b, IrExpr **idx, int nidx);
/* b[idx]'s stored bits as the unsigned integer of b's dtype width (load.bits),
 * and the store of such bits (store.bits); ir_bits_dtype names that integer. */
IrExpr *ir_load_bits(TsArena *a, IrBuffer *b, IrExpr **idx, int nidx);
TsDType ir_bits_dtype(TsDType dt);
/* Binary op with dtype promotion and constant folding. */
IrExpr *ir_bin(TsArena *a, IrBinOp op, IrExpr *x, IrExpr *y);
IrExpr *ir_neg(TsArena *a, IrExpr *x);
IrExpr *ir_not(TsArena *a, IrExpr *x);
IrExpr *ir_select(TsArena *a, IrExpr *c, IrExpr *x, IrExpr *y);
IrExpr *ir_cast(TsArena *a, TsDType dt, IrExpr *x);
IrExpr *ir_call(TsArena *a, IrIntrinsic fn, IrExpr **args, int nargs, TsDType dt);
bool ir_is_const_int(const IrExpr *e, int64_t *out);
/* True if fn holds for some node of e (visited pre-order, children of
 * loads — the indices — included). */
bool ir_expr_any(const IrExpr *e, bool (*fn)(const IrExpr *e, void *ctx), void *ctx);
/* Structural equality (variables and buffers compared by identity). */
bool ir_expr_equal(const IrExpr *a, const IrExpr *b);
/* The dtype two operands are promoted to (TVM-like rules). */
TsDType ir_promote(TsDType a, TsDType b);

IrStmt *ir_stmt(TsArena *a, IrStmtKind kind, TsLoc loc);
IrStmt *ir_seq(TsArena *a);
void ir_seq_push(TsArena *a, IrStmt *seq, IrStmt *s);
IrStmt *ir_for(TsArena *a, IrVar *v, IrExpr *min, IrExpr *extent, IrForKind kind, IrStmt *body);
IrStmt *ir_store(TsArena *a, IrBuffer *b, IrExpr **idx, int nidx, IrExpr *value);
IrStmt *ir_store_bits(TsArena *a, IrBuffer *b, IrExpr **idx, int nidx, IrExpr *bits);
/* A vector copy may move elements of dtype src into a buffer of dtype
 * dst: the same dtype, or a conversion between float32 and float16 /
 * bfloat16 (IR_S_VCOPY's converting copies). */
bool ir_vcopy_dtypes_ok(TsDType dst, TsDType src);

/* A view's index map (IrBuffer.base): the indices into view->base of
 * the element view[idx[0..view->ndim)], written per group of dimensions
 * whose extents multiply to the same product on both sides (a merge of
 * base dimensions is a sum of products, a split a division and a modulo),
 * through the row-major flat index where no grouping is found. */
IrExpr **ir_view_index(TsArena *a, const IrBuffer *view, IrExpr *const *idx);
/* b's row-major flat index of the element b[idx], and the indices of flat
 * element `flat` (views of another dtype: resolve_views). */
IrExpr *ir_flat_index(TsArena *a, const IrBuffer *b, IrExpr *const *idx);
IrExpr **ir_unflat_index(TsArena *a, const IrBuffer *b, IrExpr *flat);
/* b is a view, or some buffer of k views it: its elements are also reached
 * under another name until resolve_views (passes before it that reason
 * about one buffer's accesses leave such buffers alone). */
bool ir_buffer_has_view(const IrKernel *k, const IrBuffer *b);

/* Region helpers. */
IrRegion ir_region_full(TsArena *a, IrBuffer *b);

/* Deep copy of an expression / statement, replacing vars per the map
 * (from[i] -> to[i]); used by macro inlining and op lowering. */
IrExpr *ir_subst(TsArena *a, IrExpr *e, IrVar **from, IrExpr **to, int n);
/* Statement version: a deep copy (tile ops and regions included) with the
 * same substitution.  Vars bound inside (loops, lets) are kept, not renamed. */
IrStmt *ir_stmt_subst(TsArena *a, const IrStmt *s, IrVar **from, IrExpr **to, int n);

/* ---- printing and checking (print.c, verify.c) ------------------------------------ */

/* Readable IR text, TileLang-like.  Stable: golden tests compare it. */
void ir_print_kernel(TsBuf *b, const IrKernel *k);
void ir_print_stmt(TsBuf *b, const IrStmt *s, int indent);
void ir_print_expr(TsBuf *b, const IrExpr *e);
/* Structural checks (dtypes, index counts, scopes, var definitions).
 * Reports the first problem through d as an internal error. */
void ir_verify(TsDiag *d, const IrKernel *k);

#endif
