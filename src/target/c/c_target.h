/*
 * c_target.h — the CPU backend: lowered IR -> C source -> shared object ->
 * blocks run on worker threads.
 *
 * Three pieces, three files:
 *
 *   codegen_c.c  ts_c_codegen: a lowered IrKernel (no tile ops left) becomes
 *                one self-contained C11 file.  One block of the grid is one
 *                call of the exported block function, run sequentially by
 *                one CPU thread; every IR_FOR is a plain C loop.
 *                (prelude_c.c holds the fixed text every file starts with.)
 *   build_c.c    ts_c_build: compile that file with the system C compiler
 *                into a shared object kept in a disk cache, dlopen it, check
 *                the ABI version.
 *   sched_c.c    ts_c_run: run the grid's blocks on worker threads — plain
 *                calls for ordinary kernels, coroutines (ucontext) for
 *                kernels whose blocks wait on each other (IrKernel.may_block).
 *
 * The ABI between the runtime and the generated code.  The runtime and the
 * generated file must agree on the layout of a few structs.  To make drift
 * impossible, the declarations are written exactly once, below, inside
 * TS_C_ABI(...): that macro both compiles them here and turns the very same
 * tokens into a string (ts_c_abi_source()), which the code generator pastes
 * into every generated file.  As a second guard against a different compiler
 * or flags laying the structs out differently, the generated file carries
 * _Static_asserts of sizeof/offsetof with the values this library was
 * compiled with (ts_c_emit_abi_asserts); a mismatch fails the build, not
 * the run.  Bump TS_C_ABI_VERSION whenever these structs or the exported
 * functions change meaning; modules built for another version are refused
 * at load time (and never found in the cache, whose key hashes the source,
 * which contains the version).
 *
 * Exported symbols of a generated module (all other functions are static):
 *
 *   uint32_t tsk_abi_version(void);                     TS_C_ABI_VERSION
 *   void tsk_info(TsCInfo *out);                        static facts
 *   void tsk_grid(const TsCArgs *a, int64_t grid[3]);   grid extents x,y,z
 *   void tsk_block(const TsCArgs *a, TsCBlock *b);      run one block
 *
 * Who fills what: the launcher (driver/launch.c) fills TsCArgs from the
 * user's tensors after checking them; the scheduler fills `yield` and one
 * TsCBlock per block (index, scratch area, coroutine handle).
 */
#ifndef TS_C_TARGET_H
#define TS_C_TARGET_H

#include "core.h"

/* Version of the runtime <-> generated-code ABI below. */
#define TS_C_ABI_VERSION 6u

/* Exported symbol names (dlsym). */
#define TS_C_SYM_ABI "tsk_abi_version"
#define TS_C_SYM_INFO "tsk_info"
#define TS_C_SYM_GRID "tsk_grid"
#define TS_C_SYM_BLOCK "tsk_block"

/* Alignment of each block's scratch area and of every buffer in it. */
#define TS_C_SCRATCH_ALIGN 64

/* Compile the declarations and keep their text: see the essay above. */
#define TS_C_ABI(...)                                                          \
    __VA_ARGS__                                                                \
    static inline const char *ts_c_abi_source(void) { return #__VA_ARGS__; }

TS_C_ABI(
/* Called by waiting loops (IR_S_WHILE) of may_block kernels: lets the worker
 * run other blocks.  The argument is TsCBlock.yield_ctx. */
typedef void (*TsCYieldFn)(void *yield_ctx);
/* Prints one line of T.print output (text ends with a newline). */
typedef void (*TsCPrintFn)(void *print_ctx, const char *text);
/* Reports an out-of-bounds access in a checked kernel; the block then ends
 * (longjmp) and the launch fails.  site: "file:line:col: error: kernel 'k':
 * out-of-bounds load from 'A'"; source: the source line and caret, or "". */
typedef void (*TsCFaultFn)(void *fault_ctx, const char *site, const char *source, int32_t dim,
                           int64_t index, int64_t extent, const int64_t *block);
/* Reports a run-time error of a distributed primitive (the text names the
 * rank, the buffer and what went wrong) and stops every rank's waits; the
 * block returns right after. */
typedef void (*TsCFailFn)(void *fail_ctx, const char *text);
/* One request to the transport that reaches ranks of other nodes (sim
 * ranks emulating nodes: comm/world.c's proxy; what NCCL's GIN is on
 * GPUs).  A peer's memory is named by (peer, byte offset in its heap), as
 * a registered window is, never by an address. */
typedef struct TsCXport {
    int32_t op;        /* TS_C_XPORT_* */
    int32_t peer;      /* a rank of another node */
    int64_t off;       /* byte offset in the peer's heap */
    int64_t bytes;     /* PUT/GET: bytes moved; ADD: the element's bytes (4 or 8) */
    void *local;       /* PUT: the source (copied before the call returns); GET: the destination;
                          ADD: where the value before the add goes (NULL: not wanted) */
    int32_t is_float;  /* ADD: the element is a float/double (else an integer) */
    int64_t ival;      /* ADD: the integer operand */
    double fval;       /* ADD: the floating-point operand */
} TsCXport;
/* Queues one request (PUT, ADD without a value wanted) or does it
 * (GET, ADD with the old value, QUIET: every earlier request of the world
 * done); requests are done in the order they were queued.  Returns 0, or
 * 1 when the range is outside the peer's heap (the caller reports). */
typedef int (*TsCXportFn)(void *xport_ctx, const TsCXport *req);
enum { TS_C_XPORT_PUT, TS_C_XPORT_GET, TS_C_XPORT_ADD, TS_C_XPORT_QUIET };
/* Milliseconds of a monotonic clock (wait timeouts). */
typedef int64_t (*TsCClockFn)(void);

struct TsCArgs;
struct TsCBlock;
/* Kernels whose threads wait for each other (IrKernel.thread_coro,
 * threads_c.c): tsk_block hands the block to TsCArgs.threads, which runs
 * the generated per-thread function for every thread as a coroutine. */
typedef void (*TsCThreadFn)(const struct TsCArgs *a, struct TsCBlock *b, int32_t tid);
typedef void (*TsCThreadsFn)(const struct TsCArgs *a, struct TsCBlock *b, int32_t nthreads, TsCThreadFn fn);
/* A thread's barrier: bar.sync id, count (id 0, count 0: every live thread
 * of the block).  thread_ctx: the thread's TsCBlock.yield_ctx. */
typedef void (*TsCTBarFn)(void *thread_ctx, int32_t id, int32_t count);
/* A lane's part of a warp primitive: op (TS_C_WARP_*), the value's kind
 * (TS_C_WK_*) and bits, the lane or delta, the width, the ballot's mask;
 * returns the lane's result bits once every live lane of the warp met. */
typedef int64_t (*TsCWarpFn)(void *thread_ctx, int32_t op, int32_t kind, int64_t bits, int32_t arg,
                             int32_t width, uint32_t mask);
enum {
    TS_C_WARP_SHFL, TS_C_WARP_SHFL_UP, TS_C_WARP_SHFL_DOWN, TS_C_WARP_SHFL_XOR, TS_C_WARP_BALLOT,
    TS_C_WARP_SYNC, TS_C_WARP_SUM, TS_C_WARP_MAX, TS_C_WARP_MIN, TS_C_WARP_BAND, TS_C_WARP_BOR
};
/* value kinds: the compute types of generated code */
enum { TS_C_WK_I64, TS_C_WK_U32, TS_C_WK_U64, TS_C_WK_F32, TS_C_WK_F64 };

/* One launch's arguments, shared by all blocks (read-only for them). */
typedef struct TsCArgs {
    uint32_t abi_version;           /* TS_C_ABI_VERSION of whoever filled it */
    int32_t nparams;                /* number of kernel parameters */
    void *const *data;              /* [nparams] tensor data, or pointer to the
                                       scalar's value stored in the param's dtype */
    const int64_t *const *shape;    /* [nparams] extents (NULL for scalars) */
    const int64_t *const *strides;  /* [nparams] element strides (NULL for scalars) */
    const int64_t *shape_vars;      /* values of IrKernel.shape_vars, in order */
    int32_t rank;                   /* IR_VAR_RANK axis 0: this process's rank */
    int32_t nranks;                 /* IR_VAR_RANK axis 1: number of ranks */
    TsCYieldFn yield;               /* see TsCYieldFn; set by the scheduler */
    TsCPrintFn print;               /* see TsCPrintFn */
    void *print_ctx;                /* first argument of print */
    TsCFaultFn fault;               /* see TsCFaultFn; set by the scheduler */
    void *fault_ctx;                /* first argument of fault */
    /* The distributed world (comm/world.h); outside a world: rank 0 of 1. */
    void *const *peer_base;         /* [nranks] every rank's symmetric heap base, or NULL */
    int64_t heap_bytes;             /* size of each rank's heap */
    int64_t *sync_words;            /* world-wide counters (T.barrier_all), or NULL */
    const int32_t *aborted;         /* non-zero once any rank failed: waits give up */
    int64_t wait_timeout_ms;        /* a wait longer than this fails (comm/world.h) */
    TsCFailFn fail;                 /* see TsCFailFn */
    void *fail_ctx;                 /* first argument of fail */
    TsCClockFn now_ms;              /* see TsCClockFn */
    TsCThreadsFn threads;           /* see TsCThreadFn; set by the scheduler */
    TsCTBarFn tbar;                 /* see TsCTBarFn; set by the scheduler */
    TsCWarpFn warp;                 /* see TsCWarpFn; set by the scheduler */
    /* Several nodes (comm/world.h): peer_base[p] is NULL for a rank p of
     * another node, reached through xport only. */
    int32_t ranks_per_node;         /* IR_VAR_RANK axis 2: node of rank r = r / ranks_per_node */
    TsCXportFn xport;               /* the transport to other nodes, or NULL (one node) */
    void *xport_ctx;                /* first argument of xport */
    int64_t sync_off;               /* byte offset of sync_words' word in rank 0's heap (T.barrier_all
                                       through xport where sync_words is NULL: rank 0 on another node) */
    unsigned char *grid_ws;         /* the launch's grid workspace (TsCInfo.grid_ws_bytes, zeroed; the
                                       grid barrier's count first): set by the scheduler, or NULL */
} TsCArgs;

/* What one block gets. */
typedef struct TsCBlock {
    int64_t idx[3];                 /* block index (x, y, z) */
    unsigned char *scratch;         /* TsCInfo.scratch_bytes, TS_C_SCRATCH_ALIGN-aligned */
    void *yield_ctx;                /* argument of TsCArgs.yield */
} TsCBlock;

/* Static facts about a module, from tsk_info. */
typedef struct TsCInfo {
    uint32_t abi_version;           /* TS_C_ABI_VERSION it was generated for */
    int32_t nparams;                /* number of kernel parameters */
    int32_t nshape_vars;            /* length of TsCArgs.shape_vars */
    int32_t may_block;              /* blocks wait on each other (IrKernel.may_block or
                                       .cooperative): run as coroutines */
    int64_t scratch_bytes;          /* per-block scratch size (shared/fragment/local) */
    const char *name;               /* the kernel's name */
    int64_t grid_ws_bytes;          /* IrKernel.grid_ws_bytes: T.sync_grid's barrier and the block
                                       collectives' staging, per launch (0: none) */
} TsCInfo;

typedef uint32_t (*TsCAbiFn)(void);
typedef void (*TsCInfoFn)(TsCInfo *out);
typedef void (*TsCGridFn)(const TsCArgs *a, int64_t grid[3]);
typedef void (*TsCBlockFn)(const TsCArgs *a, TsCBlock *b);
)

/* A loaded module (core.h forward-declares it). */
struct TsModuleC {
    void *dl;          /* dlopen handle */
    TsCInfo info;      /* from tsk_info */
    TsCGridFn grid;    /* tsk_grid */
    TsCBlockFn block;  /* tsk_block */
    char *path;        /* the shared object's path in the cache (malloc'ed) */
};

/* ---- codegen_c.c ---------------------------------------------------------- */

/* Lowered IR -> C source appended to out.  caps->check_bounds (caps NULL:
 * on) checks every index of every buffer access against its extent; an
 * access outside is reported through TsCArgs.fault and ends the block.  Fails (ts_fail_at) with
 * TS_ERR_UNSUPPORTED for constructs the C target cannot run and with
 * TS_ERR_INTERNAL if a tile op is still present. */
void ts_c_codegen(TsDiag *d, const IrKernel *k, const TsCaps *caps, TsBuf *out);

/* prelude_c.c: the fixed head of every generated file (includes, helpers,
 * ABI declarations and asserts, print helper). */
void ts_c_emit_prelude(TsBuf *out);
/* Appends the _Static_asserts that pin the ABI struct layouts to this
 * library's view of them (part of the prelude; exposed for tests). */
void ts_c_emit_abi_asserts(TsBuf *out);

/* ---- build_c.c ------------------------------------------------------------ */

/* Compile `code` (or find it in the disk cache) and load it.  opt may be
 * NULL.  Appends "cc <ms>" or "cache hit <ms>", then "load <ms>" lines to
 * timing when it is non-NULL.  Fails with TS_ERR_BUILD (compiler output in
 * the message), TS_ERR_IO (cache directory) via ts_fail_at. */
TsModuleC *ts_c_build(TsDiag *d, const char *code, const TsCompileOptions *opt,
                      TsBuf *timing);
void ts_c_module_free(TsModuleC *m);
/* Split s into words as a POSIX shell would without expansions (blanks
 * separate; '...', "..." and backslash quote); emit gets each word (not
 * NUL-terminated in general: use n).  -1: an unterminated quote, or emit
 * failed.  Used to build the compiler's argv from CC and TILESCALE_CFLAGS. */
int ts_c_split_words(const char *s, int (*emit)(void *ctx, const char *w, size_t n), void *ctx);

/* ---- sched_c.c ------------------------------------------------------------ */

/* Run every block of `grid` (x fastest) on nthreads workers (<= 0: one per
 * online core).  a is copied; its `yield` is filled in here, and `print`
 * defaults to stdout when NULL.  Returns TS_OK, or an error code with a
 * message added to d (no longjmp): TS_ERR_NOMEM if stacks or scratch
 * cannot be allocated. */
TsStatus ts_c_run(TsDiag *d, const TsModuleC *m, const TsCArgs *a, const int64_t grid[3],
                  int nthreads);

/* The default print callback: writes text to stdout. */
void ts_c_print_stdout(void *print_ctx, const char *text);
/* Has the launch of a (filled by ts_c_run) been stopped by an error? */
int ts_c_launch_failed(const TsCArgs *a);

/* ---- threads_c.c ---------------------------------------------------------- */

/* Fills TsCArgs.threads / tbar / warp: a block's threads as coroutines. */
void ts_c_threads_fill(TsCArgs *a);

#endif
