/*
 * tilescale.h — the public C API of libtilescale.
 *
 * A context owns everything: compiled kernels, the diagnostic text of the
 * last failure, options such as the disk-cache directory.  No function in
 * this library exits or aborts the process on user error: every entry point
 * returns a TsStatus, and on failure ts_last_error() holds the diagnostic
 * (`file:line:col: error: message`, the source line and a caret).
 *
 * Typical use:
 *
 *   TsContext *ctx; ts_context_create(&ctx);
 *   TsDefine defs[] = {{"M", "256"}, {"N", "256"}, {"K", "128"}};
 *   TsKernel *k;
 *   if (ts_compile_file(ctx, "gemm.py", "matmul", defs, 3, NULL, &k))
 *       fprintf(stderr, "%s", ts_last_error(ctx));
 *   TsTensor args[3] = {...};           // DLPack-style host tensors
 *   ts_kernel_launch(k, args, 3);
 *   ts_kernel_destroy(k); ts_context_destroy(ctx);
 */
#ifndef TILESCALE_H
#define TILESCALE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header.  ts_version() gives the library's, which
 * differs where a program runs against another build of the shared
 * library; TILESCALE_VERSION_NUMBER is major * 10000 + minor * 100 + patch,
 * for #if tests. */
#define TILESCALE_VERSION_MAJOR 0
#define TILESCALE_VERSION_MINOR 1
#define TILESCALE_VERSION_PATCH 0
#define TILESCALE_VERSION "0.1.0"
#define TILESCALE_VERSION_NUMBER \
    (TILESCALE_VERSION_MAJOR * 10000 + TILESCALE_VERSION_MINOR * 100 + TILESCALE_VERSION_PATCH)

/* Error codes.  TS_OK is zero so `if (ts_...())` tests for failure. */
typedef enum TsStatus {
    TS_OK = 0,
    TS_ERR_SYNTAX,      /* the source text does not parse */
    TS_ERR_UNSUPPORTED, /* a construct this compiler does not handle (yet) */
    TS_ERR_NAME,        /* unknown name, unknown T.* function, unknown entry */
    TS_ERR_TYPE,        /* a value of the wrong kind or dtype in the source */
    TS_ERR_PARAM,       /* wrong, missing or unknown -D compile-time value */
    TS_ERR_SHAPE,       /* tensor shape mismatch at launch */
    TS_ERR_DTYPE,       /* tensor dtype mismatch at launch */
    TS_ERR_ARGCOUNT,    /* wrong number of launch arguments */
    TS_ERR_IO,          /* a file could not be read or written */
    TS_ERR_BUILD,       /* the generated code did not compile or load */
    TS_ERR_RUNTIME,     /* a kernel failed while running */
    TS_ERR_NOMEM,       /* out of memory */
    TS_ERR_INVALID,     /* a bad argument to an API function */
    TS_ERR_INTERNAL     /* a bug in this library; please report it */
} TsStatus;

/* Element types.  The names are TileLang's dtype strings. */
typedef enum TsDType {
    TS_BOOL,
    TS_INT8,
    TS_UINT8,
    TS_INT16,
    TS_UINT16,
    TS_INT32,
    TS_UINT32,
    TS_INT64,
    TS_UINT64,
    TS_FLOAT16,
    TS_BFLOAT16,
    TS_FLOAT32,
    TS_FLOAT64,
    TS_FLOAT8_E4M3,
    TS_FLOAT8_E5M2,
    TS_INT4,        /* 4-bit signed integer, two to a byte, the low nibble first (TileLang's
                       pack_int4).  A kernel's int4 tensor (M, K) is an int8 parameter
                       (M, K / 2) holding the packed bytes, as TileLang passes it */
    TS_FLOAT4_E2M1, /* 4-bit float, OCP MX FP4 E2M1 (sign, 2 exponent bits, 1 mantissa bit:
                       +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}, no inf or NaN), TileLang's float4_e2m1fn.
                       Stored two to a byte, the low nibble first, as int4: a kernel's tensor
                       (M, K) is an int8 parameter (M, K / 2) of packed bytes (torch's
                       float4_e2m1fn_x2 has the same bytes) */
    TS_DTYPE_COUNT,
    TS_DTYPE_NONE = -1
} TsDType;

typedef enum TsTarget {
    TS_TARGET_C = 0, /* plain C, compiled by the system C compiler */
    TS_TARGET_CUDA   /* CUDA C++, compiled by NVRTC (not yet available) */
} TsTarget;

/* A compile-time value given from outside, as text: "256", "0.5",
 * "True", "float16".  Like `-D name=value` on the command line. */
typedef struct TsDefine {
    const char *name;
    const char *value;
} TsDefine;

/* A host tensor, described the way DLPack does. */
typedef struct TsTensor {
    void *data;             /* first element */
    TsDType dtype;          /* element type */
    int ndim;               /* number of dimensions */
    const int64_t *shape;   /* ndim extents */
    const int64_t *strides; /* ndim strides in elements; NULL: row-major contiguous */
} TsTensor;

typedef struct TsCompileOptions {
    TsTarget target;         /* TS_TARGET_C by default */
    const char *dump_after;  /* a pass name: keep the IR after it (ts_kernel_ir) */
    const char *cache_dir;   /* NULL: $TILESCALE_CACHE_DIR or ~/.cache/tilescale */
    const char *cc;          /* NULL: $CC or "cc" */
    int num_threads;         /* CPU worker threads for launches; 0: all cores */
    int timing;              /* non-zero: record phase times (ts_kernel_timing) */
    int skip_build;          /* non-zero: stop after code generation (no cc, no launch) */
    int lenient_defines;     /* non-zero: ignore -D names the entry does not take */
    const char *cflags;      /* extra C compiler flags (C target), split into words; NULL: $TILESCALE_CFLAGS */
    int check_bounds;        /* 0: the target's default (C: checked, CUDA: not); > 0: check every
                                buffer access (an out-of-bounds one fails the launch naming kernel,
                                buffer, index and source line); < 0: no checks */
    int tiered;              /* CUDA, TS_TIERED_*: build in two tiers where the disk cache has no full
                                build yet: a quick tier (gemm k-loops not unrolled, NVRTC's fast-compile
                                level) compiled at once and launched, the full tier compiled on a
                                background thread, cached and swapped in for later launches
                                (ts_kernel_tier, ts_kernel_wait_full).  AUTO (0): $TILESCALE_TIERED
                                (0 | 1 | quick), else only kernels whose full build is large (>= 128
                                mma.sync per warp unrolled: GEMM 128x256 tiles, FlashAttention D128) */
    int multinode;           /* > 0: the kernel will run in a world of several nodes (ranks_per_node <
                                ranks): each access to a peer goes by load/store where the peer is on
                                this rank's node, through the transport otherwise (doc/DISTRIBUTED.md,
                                "Several nodes"); 0: one node, every peer addressable */
    const char *nvcc;        /* CUDA kernels that use NCCL's device API (multinode: GIN) are built by nvcc,
                                which NVRTC cannot replace there (doc/DISTRIBUTED.md): this program;
                                NULL: $TILESCALE_NVCC, else bin/nvcc under $CUDA_HOME, $CUDA_PATH,
                                /usr/local/cuda, else nvcc on $PATH */
    const char *nccl_include; /* the directory with NCCL's nccl_device.h for those builds; NULL:
                                $TILESCALE_NCCL_INCLUDE, $NCCL_HOME/include, nvcc's own include
                                directory, /usr/local/include, /usr/include (the first that has it) */
} TsCompileOptions;

/* TsCompileOptions.tiered.  ON: every single CUDA kernel (not a chain);
 * OFF: never; QUICK: the quick tier alone (no full build: benchmarks,
 * tests and `--emit cuda` of the quick tier). */
enum { TS_TIERED_AUTO = 0, TS_TIERED_ON = 1, TS_TIERED_OFF = 2, TS_TIERED_QUICK = 3 };

/* What the caller needs to know about one kernel parameter. */
typedef struct TsParamInfo {
    const char *name;
    int is_tensor;       /* 1: a tensor; 0: a scalar */
    int is_output;       /* listed in @tilelang.jit(out_idx=...) */
    TsDType dtype;
    int ndim;
    int64_t shape[8];    /* -1 where the extent is a run-time shape variable */
    const char *shape_names[8]; /* the variable's name where shape[i] == -1, else NULL */
} TsParamInfo;

typedef struct TsContext TsContext;
typedef struct TsKernel TsKernel;

TsStatus ts_context_create(TsContext **out);
void ts_context_destroy(TsContext *ctx);

/* Diagnostic text of the last failure in this context ("" if none). */
const char *ts_last_error(const TsContext *ctx);
/* Warnings of the last ts_compile_file/ts_compile_source in this context,
 * successful or not ("" if none): each `file:line:col: warning: message`
 * with the source line and a caret, in the form of errors.  A warning
 * says the kernel compiled but not as written or hoped (e.g. fragments
 * left in shared memory because two instructions fix different layouts
 * for one of them). */
const char *ts_last_warnings(const TsContext *ctx);
const char *ts_status_name(TsStatus s);

TsStatus ts_compile_file(TsContext *ctx, const char *path, const char *entry,
                         const TsDefine *defs, int ndefs,
                         const TsCompileOptions *opt, TsKernel **out);
TsStatus ts_compile_source(TsContext *ctx, const char *filename, const char *text,
                           const char *entry, const TsDefine *defs, int ndefs,
                           const TsCompileOptions *opt, TsKernel **out);

const char *ts_kernel_name(const TsKernel *k);
/* The parameters a launch takes, in order.  T.alloc_global workspaces are
 * not among them: the launch allocates each (not zero-filled, as
 * TileLang's) and frees it after the chain ran; ts_kernel_param(k, i)
 * describes workspace i - ts_kernel_num_params(k) for i from
 * ts_kernel_num_params(k) to that plus ts_kernel_num_workspaces(k). */
int ts_kernel_num_params(const TsKernel *k);
int ts_kernel_num_workspaces(const TsKernel *k);
TsStatus ts_kernel_param(const TsKernel *k, int i, TsParamInfo *info);
/* Extent d of tensor parameter i as the text of its expression over the
 * shape variables, in Python's syntax ("M", "(N + 7) // 8", "min(M, 64)";
 * `//` and `%` floor), or NULL (not a tensor, d out of range).  For an
 * output whose extent is computed from the inputs' (T.empty((M,
 * T.ceildiv(N, g)))): the Python layer allocates it from this.  The text
 * lives as long as the kernel. */
const char *ts_kernel_param_extent(const TsKernel *k, int i, int d);
/* Grid extents and threads per block.  Extents that depend on run-time
 * shape variables are -1 here; they are known at launch. */
void ts_kernel_grid(const TsKernel *k, int64_t grid[3], int *threads);
const char *ts_kernel_source(const TsKernel *k); /* generated code */
/* A prim_func with several T.Kernel blocks compiles to a chain of kernels
 * that ts_kernel_launch runs in order: the next one (its source, grid...),
 * or NULL.  Owned by k. */
const TsKernel *ts_kernel_next(const TsKernel *k);
const char *ts_kernel_ir(const TsKernel *k);     /* IR after opt->dump_after, or final IR */
/* Phase times in milliseconds as text, one "phase ms" per line. */
const char *ts_kernel_timing(const TsKernel *k);

/* Run the kernel on host tensors (CPU target).  Checks argument count,
 * dtypes, shapes (binding run-time shape variables, consistently). */
TsStatus ts_kernel_launch(TsKernel *k, const TsTensor *args, int nargs);
/* Run the kernel on tensors already in CUDA device memory (CUDA target):
 * every tensor's data is a device address in device 0's primary context
 * (the context PyTorch and the CUDA runtime use), scalars stay host values
 * (0-dim tensors).  The launch (each kernel of a chain in order) is queued
 * on `stream` (a CUstream; NULL: the default stream) and not waited for:
 * nothing is copied, faults show up at the caller's next synchronization.
 * Same argument checks as ts_kernel_launch; TS_ERR_INVALID for a kernel of
 * the C target. */
TsStatus ts_kernel_launch_device(TsKernel *k, const TsTensor *args, int nargs, void *stream);
/* A device launch prepared once for one call signature (the Python
 * layer's fast path): ts_kernel_prepare_device makes every check of
 * ts_kernel_launch_device on `args` and binds the extents, strides, shape
 * variables and grid they give, but launches nothing.  Each later
 * ts_plan_launch queues the kernel with those values and the data
 * addresses found at that moment in ts_plan_pointers(plan)[i] (one
 * 64-bit slot per parameter, in order, first filled from args), so a call
 * costs the driver's launch and no argument checking: the caller must pass
 * tensors of exactly the prepared dtypes, extents and strides, on the same
 * device.  Plans belong to the kernel (freed by ts_kernel_destroy).
 * TS_ERR_UNSUPPORTED for a chain of kernels or scalar parameters, else the
 * errors of ts_kernel_launch_device. */
typedef struct TsPlan TsPlan;
TsStatus ts_kernel_prepare_device(TsKernel *k, const TsTensor *args, int nargs, TsPlan **plan);
uint64_t *ts_plan_pointers(TsPlan *plan);
TsStatus ts_plan_launch(TsPlan *plan, void *stream);
/* ts_plan_launch with the stream and the data addresses in one buffer of
 * 8-byte words (any alignment): the CUstream first, then one address per
 * parameter in order (Python: struct.pack("<4Q", stream, a, b, c)).  The
 * plan's pointer slots are neither read nor written, so threads launching
 * one plan need no lock around their calls. */
TsStatus ts_plan_launch_packed(TsPlan *plan, const void *packed);
/* The device code of this kernel (CUDA target; not the rest of a chain)
 * as `form`: "ptx" (NVRTC's PTX, same architecture and options as the
 * build) or "cubin" (the machine code a build loads).  Needs NVRTC, not a
 * GPU.  *out is malloc'ed (free() it; PTX ends in a NUL), *size its bytes.
 * TS_ERR_INVALID for the C target or another form, TS_ERR_BUILD where
 * NVRTC is missing or fails (ts_last_error says why). */
TsStatus ts_kernel_device_code(const TsKernel *k, const char *form, void **out, size_t *size);
/* Dynamic shared memory per block in bytes (CUDA target, built), else -1. */
/* Which build a launch of k runs now (TS_TIER_*): FULL (not tiered, or the
 * full tier was swapped in), QUICK (the full tier is being built in the
 * background; a later launch swaps it in once it is done), QUICK_ONLY
 * (TS_TIERED_QUICK, or the full tier's build failed: ts_kernel_wait_full
 * says why).  A prepared launch (ts_kernel_prepare_device) starts on the
 * tier running when it is prepared and moves to the full tier at its first
 * launch after the full build is done (no lock: two atomic loads per
 * launch once moved); ts_kernel_tier says which one runs.
 * ts_kernel_wait_full waits for the background build and swaps the full
 * tier in: TS_OK when the full tier runs from now on (or k is not tiered),
 * else the build's error (the quick tier stays usable). */
enum { TS_TIER_FULL = 0, TS_TIER_QUICK = 1, TS_TIER_QUICK_ONLY = 2 };
int ts_kernel_tier(const TsKernel *k);
TsStatus ts_kernel_wait_full(TsKernel *k);
int64_t ts_kernel_shared_bytes(const TsKernel *k);
TsTarget ts_kernel_target(const TsKernel *k);
/* Write an SVG picture per fragment buffer (which thread and register
 * holds each element; CUDA target) and per shared buffer (where the
 * swizzle puts each element: 16-byte chunk and bank) of every kernel of
 * the chain into directory dir (created if missing), as
 * <kernel>_<buffer>.svg; *nwritten (may be NULL) gets the count.
 * TS_ERR_IO if dir cannot be written. */
TsStatus ts_kernel_plot_layouts(TsKernel *k, const char *dir, int *nwritten);
void ts_kernel_destroy(TsKernel *k);

/* Host tensors: .npy files and element access (any dtype, as double). */
TsStatus ts_npy_load(TsContext *ctx, const char *path, TsTensor *out); /* allocates out->data and shape */
TsStatus ts_npy_save(TsContext *ctx, const char *path, const TsTensor *t); /* through symlinks;
   never over a device or other non-regular file; write errors reported */
/* Would ts_npy_save(path) succeed as far as the file system goes?  (CLI: before the kernel runs.) */
TsStatus ts_npy_check_writable(TsContext *ctx, const char *path);
void ts_tensor_free(TsTensor *t);  /* frees data and shape of a tensor from ts_npy_load/ts_tensor_alloc */
TsStatus ts_tensor_alloc(TsTensor *t, TsDType dt, int ndim, const int64_t *shape); /* contiguous, zeroed;
   TS_ERR_NOMEM when the byte count overflows or exceeds the memory available */
/* The same, with the reason in ts_last_error(ctx) (name: the tensor's name for the message). */
TsStatus ts_tensor_alloc_ctx(TsContext *ctx, TsTensor *t, TsDType dt, int ndim, const int64_t *shape,
                             const char *name);
int64_t ts_tensor_numel(const TsTensor *t); /* -1 if the count overflows */
double ts_tensor_get(const TsTensor *t, int64_t i);       /* i-th element in row-major order */
void ts_tensor_set(TsTensor *t, int64_t i, double v);     /* rounds to the dtype */

/* Non-zero if kernels can run on target t here (CUDA: a driver, a device and
 * NVRTC were found; C: always). */
int ts_target_available(TsTarget t);

/* sizeof of a public struct by name ("TsTensor", "TsDefine",
 * "TsCompileOptions", "TsParamInfo", "TsEntryInfo", "TsEntryParam",
 * "TsCacheInfo"), 0 for other names: lets bindings
 * (python/tilescale/_lib.py's ctypes mirrors) check their layouts. */
size_t ts_abi_sizeof(const char *struct_name);

/* The library's version ("0.1.0") and its TILESCALE_VERSION_NUMBER. */
const char *ts_version(void);
int ts_version_number(void);

/* The entries of a source file, as `tilescale list FILE` shows them: every
 * top-level function that can be compiled (a factory returning a
 * @T.prim_func, an eager @tilelang.jit kernel, a top-level @T.prim_func),
 * with its parameters as written in the source.  Read from the syntax
 * alone: nothing of the file is run. */
typedef enum TsEntryKind {
    TS_ENTRY_FACTORY,   /* a def returning a @T.prim_func: its parameters are -D values */
    TS_ENTRY_EAGER,     /* an eager kernel (its body has `with T.Kernel`): -D values and tensors */
    TS_ENTRY_PRIM_FUNC, /* a top-level @T.prim_func: tensors and scalars, no -D values */
    TS_ENTRY_BROKEN     /* a top-level def that does not parse (error says why) */
} TsEntryKind;
typedef enum TsEntryParamKind {
    TS_PARAM_DEFINE, /* a compile-time value: -D name=value */
    TS_PARAM_TENSOR, /* a tensor, given at launch */
    TS_PARAM_SCALAR, /* a scalar given at launch (a prim_func's T.int32 ...) */
    TS_PARAM_CONST,  /* an eager kernel's T.const name: -D, else bound from the tensors at launch */
    TS_PARAM_WORKSPACE /* a T.alloc_global workspace: allocated by the launch, not passed (annotation: the call) */
} TsEntryParamKind;
typedef struct TsEntryParam {
    const char *name;         /* the parameter's name */
    TsEntryParamKind kind;    /* how it is given */
    const char *annotation;   /* its annotation as written ("T.Tensor((M, K), dtype)"), or NULL */
    const char *default_text; /* its default as written ("128", "\"float16\""), or NULL: required */
    int inner;                /* 1: a parameter of the function the factory returns (-D values reach
                                 both: `def matmul(M, N, K): def kernel(block_M, ...)`) */
} TsEntryParam;
typedef struct TsEntryInfo {
    const char *name;            /* what --entry takes */
    TsEntryKind kind;            /* what it is */
    int line;                    /* line of its `def` */
    const char *out_idx;         /* @tilelang.jit(out_idx=...) as written, or NULL */
    const char *doc;             /* the first line of its docstring, or NULL */
    const char *error;           /* TS_ENTRY_BROKEN: the parser's diagnostic; else NULL */
    int nparams;                 /* entries of params */
    const TsEntryParam *params;  /* its parameters in order */
} TsEntryInfo;
/* The entries of the file at path into *entries (*n of them), owned by ctx
 * and valid until the next ts_list_entries or ts_cache_* call on it or its
 * destruction.  TS_ERR_IO if the file cannot be read, TS_ERR_SYNTAX if it
 * cannot be tokenized at all. */
TsStatus ts_list_entries(TsContext *ctx, const char *path, const TsEntryInfo **entries, int *n);

/* The disk cache of compiled kernels ($TILESCALE_CACHE_DIR, else
 * ~/.cache/tilescale).  It keeps at most $TILESCALE_CACHE_MAX bytes
 * (4096, 64K, 500M, 2G; default 1G; 0: no limit): after a build adds a
 * kernel, the least recently used kernels are removed until the rest fit
 * (kernels used in the last minute are kept, they may be in use by a
 * build in progress).  Only files the cache made are ever removed. */
typedef struct TsCacheInfo {
    const char *dir;        /* the directory (owned by the context, as ts_list_entries's results) */
    int64_t kernels;        /* kernels in it (a kernel is its source and its binary) */
    int64_t bytes;          /* their bytes, with the cache's other files (temporaries, NVRTC memos) */
    int64_t files;          /* the cache's files counted in bytes */
    int64_t limit;          /* the size limit in bytes; 0: none */
    int64_t foreign;        /* files in the directory the cache did not make (never touched) */
    int64_t removed;        /* ts_cache_clean: kernels removed */
    int64_t removed_bytes;  /* ts_cache_clean: bytes freed */
} TsCacheInfo;
/* What is in the cache (dir: NULL for the default).  A missing directory is
 * an empty cache, not an error, and is not created. */
TsStatus ts_cache_info(TsContext *ctx, const char *dir, TsCacheInfo *out);
/* Remove the cache's kernels, least recently used first, until at most
 * keep_bytes are left (0: all of them), with stale temporaries of crashed
 * writers; out (may be NULL) gets what is left and what was removed. */
TsStatus ts_cache_clean(TsContext *ctx, const char *dir, int64_t keep_bytes, TsCacheInfo *out);

/* Helpers. */
const char *ts_dtype_name(TsDType dt);
TsDType ts_dtype_from_name(const char *name); /* TS_DTYPE_NONE if unknown */
int ts_dtype_bits(TsDType dt);
/* DLPack's (code, bits, lanes): code 0 int, 1 uint, 2 float, 4 bfloat, 6 bool. */
TsDType ts_dtype_from_dlpack(int code, int bits, int lanes);

#ifdef __cplusplus
}
#endif
#endif
