/*
 * cuda_target.h — the CUDA backend: lowered IR -> CUDA C++ -> NVRTC ->
 * cubin -> CUDA driver API launch.
 *
 * Three pieces, three files, the way the C target is cut:
 *
 *   codegen_cuda.c  ts_cuda_codegen: a lowered IrKernel (tile ops already
 *                   turned into loops by the shared passes) becomes one
 *                   self-contained CUDA C++ translation unit with one
 *                   `extern "C" __global__` function, tsk_kernel.  One
 *                   CUDA thread block runs one block of the grid; the
 *                   outermost T.Parallel nests are spread over its threads.
 *                   No CUDA header is included: the prelude defines the few
 *                   types and conversions it needs (inline PTX for float16).
 *   nvrtc.c         ts_cuda_build: NVRTC (libnvrtc, opened with dlopen at
 *                   run time) compiles that text for one architecture,
 *                   through a disk cache of cubins; the result is a module
 *                   that holds the image.
 *   nvcc.c          the same for the kernels NVRTC cannot compile (NCCL's
 *                   device API, several nodes): nvcc found at run time,
 *                   through the same cache.
 *   cuda_drv.c      the driver API (libcuda.so.1, also dlopen'ed): the
 *                   device's architecture, loading the image, copying host
 *                   tensors to the device and back, launching.
 *
 * Nothing here links against CUDA.  libtilescale builds and runs on a
 * machine without CUDA: compiling for the CUDA target then fails with
 * TS_ERR_BUILD ("NVRTC not found"), and on a machine with NVRTC but no
 * driver the kernel compiles and ts_kernel_launch fails with
 * TS_ERR_RUNTIME ("no CUDA driver found").  Never a crash.
 *
 * No mutable globals: each module dlopens the driver itself (dlopen is
 * reference-counted and the libraries are opened RTLD_NODELETE, so the
 * second open is cheap), retains the device's primary context and keeps
 * its own function table.
 *
 * The kernel's parameter list (the ABI between ts_cuda_run and the
 * generated code), in this order:
 *
 *   for each IR parameter p, in order:
 *       tensor:  T *data, int64 shape[ndim], int64 strides[ndim]
 *                (T is the storage type: unsigned short for float16 /
 *                bfloat16, unsigned char for bool and float8)
 *       scalar:  its storage type, by value
 *   int64 shape_vars[IrKernel.shape_vars.n]
 *   int rank, int nranks
 *   cooperative kernels only: unsigned char *grid_ws (the launch's own grid
 *       workspace, which launch() in cuda_drv.c adds: callers pass the rest)
 *
 * Every piece of it is an ordinary by-value kernel parameter, so the
 * generated signature documents itself and cuLaunchKernel gets one
 * pointer per parameter.
 */
#ifndef TS_CUDA_TARGET_H
#define TS_CUDA_TARGET_H

#include "core.h"
#include "runtime/launch.h"
#include "ir/tileop.h"

/* Name of the generated __global__ function. */
#define TS_CUDA_ENTRY "tsk_kernel"

/* Alignment of every shared-memory buffer in the dynamic area (bytes). */
#define TS_CUDA_SMEM_ALIGN 16

/* What the code generator tells the build. */
/* The start of the generated code's second line where the kernel asks
 * ptxas for a register-usage level: TS_CUDA_PTXAS_LEVEL "8 ...".  nvrtc.c
 * passes -Xptxas --register-usage-level=8 for it (NVRTC 13 on, sm_XY). */
#define TS_CUDA_PTXAS_LEVEL "/* ptxas --register-usage-level="
/* After the level, where the kernel asks for ptxas's fast-compile level
 * too (IrKernel.ptxas_fast_compile): nvrtc.c adds -Xptxas --Ofast-compile=min. */
#define TS_CUDA_PTXAS_FAST " --Ofast-compile=min"
/* A line of its own near the top (second or third) where the kernel asks
 * NVRTC as a whole for its fast-compile level (IrKernel.nvrtc_fast_compile,
 * the quick tier): nvrtc.c adds --Ofast-compile=min (NVRTC 13 on). */
#define TS_CUDA_NVRTC_FAST "/* quick tier: nvrtc --Ofast-compile=min */"

typedef struct TsCudaCodeInfo {
    int64_t smem_bytes;  /* dynamic shared memory per block */
    int threads;         /* blockDim.x = threads[0] * threads[1] * threads[2] */
    int nsites;          /* bounds-checked access sites (TsCaps.check_bounds), 0: unchecked code */
    const char *const *site_msg; /* [nsites] "file:l:c: error: kernel 'k': out-of-bounds load from ..." */
    const char *const *site_src; /* [nsites] the source line and caret ("" if none); both in the
                                  * kernel's arena.  The device reports the first out-of-bounds
                                  * access in its __device__ ts_oob[8] (TS_CUDA_OOB_SYM), which the
                                  * launch zeroes before and reads after the kernel. */
    int cooperative;     /* IrKernel.cooperative: launched with cuLaunchCooperativeKernel after
                          * ts_cuda_coop_check, with one more parameter after ts_nranks: the
                          * launch's own grid workspace ts_grid_ws (cuda_drv.c allocates and
                          * zeroes it on the launch's stream and frees it there after the
                          * kernel, so concurrent launches never share one) */
    int64_t grid_ws_bytes; /* IrKernel.grid_ws_bytes: the size of ts_grid_ws */
} TsCudaCodeInfo;
#define TS_CUDA_OOB_SYM "ts_oob"

/* Can a cooperative launch of `grid` blocks run (cuda_drv.c; unit-tested)?
 * coop_attr: CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH; per_sm: the
 * driver's cuOccupancyMaxActiveBlocksPerMultiprocessor at the kernel's
 * threads and dynamic shared memory; sms: the SM count.  Returns 1, or 0
 * with the reason in why: the kernel, the grid, the limit and its terms. */
int ts_cuda_coop_check(const char *kname, const int64_t grid[3], int coop_attr, int per_sm, int sms, int threads,
                       int64_t smem_bytes, TsBuf *why);

typedef struct TsCuDriver TsCuDriver; /* cuda_drv.c: the dlopen'ed driver API */

/* A compiled kernel (core.h forward-declares it).  The image is loaded
 * into the driver at build time when a driver is present, otherwise at
 * the first launch (which then reports that there is no driver). */
struct TsModuleCuda {
    unsigned char *image;   /* cubin (or NUL-terminated PTX), malloc'ed */
    size_t image_size;      /* bytes of image */
    int is_ptx;             /* 1: image is PTX for the driver to JIT */
    char arch[24];          /* what it was compiled for: "sm_90", "compute_90" */
    TsCudaCodeInfo info;    /* shared memory and threads */
    const char *kname;      /* kernel name for messages (malloc'ed) */
    /* driver state, filled by ts_cuda_module_load */
    TsCuDriver *drv;        /* NULL until loaded */
    int ordinal;            /* the device to load on: 0, or another GPU for the local world's
                               copies (ts_cuda_module_clone) */
    int device;             /* its CUdevice */
    void *ctx;              /* CUcontext: the device's primary context */
    void *module;           /* CUmodule */
    void *fn;               /* CUfunction tsk_kernel */
    int lock_init;          /* 1 once `lock` is initialized */
    void *lock;             /* pthread_mutex_t * guarding the lazy load */
    struct TsPlan *plans;   /* prepared launches of this module (ts_cuda_plan_device), freed with it */
};

/* ---- codegen_cuda.c ---------------------------------------------------------- */

/* Lowered IR -> CUDA C++ appended to out.  Fails (ts_fail_at) with
 * TS_ERR_UNSUPPORTED for constructs this backend cannot run (more than
 * 1024 threads, non-constant shared extents, ...) and TS_ERR_INTERNAL if
 * a tile op is left. */
TsCudaCodeInfo ts_cuda_codegen(TsDiag *d, const IrKernel *k, const TsCaps *caps, TsBuf *out);

/*
 * Tensor-core GEMM (codegen_cuda.c).  A T.gemm that gemm.c kept for the
 * CUDA target (TS_OP_INST_MMA_SYNC) becomes one call of a device function
 * specialised to these values; the function is plain C apart from the
 * prelude's wrappers (ts_ldsm_*, ts_mma_*), so tests can compile it on
 * the host against a model of one warp.
 */
typedef struct TsCudaMma {
    int m, n, k;         /* C is m x n, the reduction is k deep */
    int lda, ldb, ldc;   /* row strides (elements) of the stored A, B, C matrices */
    int trans_a, trans_b;/* A stored k x m, B stored n x k */
    int bf16;            /* A and B are bfloat16 (else float16) */
    int clear;           /* clear_accum: C's old value is not read */
    int nwarps;          /* warps of the block (threads / 32) */
    int cm, cn;          /* one warp's C sub-tile per round (ts_cuda_mma_plan) */
    int ldsm_a, ldsm_b;  /* A / B rows 16-byte aligned: ldmatrix, else 16-bit loads */
    int c2;              /* C pairs 8-byte aligned: 64-bit loads and stores */
    /* Register mode (layout inference gave the fragments layouts): C is a
     * per-thread register array in the MMA_C layout of a wm x wn warp grid
     * (layout.h), each warp owning one sub-tile for the whole call; A may
     * be a register array too (areg: MMA_C layout of m x k with wn == 1, or
     * MMA_A: replicated over the wn warps of a warp row, the same indices). */
    int creg, areg;      /* C / A in registers */
    int wm, wn;          /* the warp grid of C's layout */
    int swz_a, swz_b;    /* A / B tiles XOR-swizzled: 1 + the swizzle's shift (IrSwizzle, bits 3, base 3); 0: none */
    int per_a, per_b;    /* a_off / b_off is a multiple of the swizzle's period: added outside
                            it, so the swizzled offsets are the same every call (hoisted) */
    int part;            /* register mode: TsMmaPart (ir/tileop.h) of a gemm split across a
                            pipeline's barrier; the function then takes the fragment registers
                            F (two sets of MI * 4 + NI * 2) after C */
    int rolled;          /* IrKernel.gemm_k_rolled (the quick tier): the k16 loop is not unrolled */
} TsCudaMma;

/*
 * T.gemm on wgmma.mma_async (sm_90a; wgmma_cuda.c): a gemm kept as
 * TS_OP_INST_WGMMA becomes one call of `void name(ts_u32 A, ts_u32 B,
 * float *C, int tid)`: A and B the shared-window addresses of the operand
 * tiles, C the thread's accumulator registers (layout WGMMA_C), tid the
 * thread's index in the block.  Every field comes from the IR.
 */
typedef struct TsCudaWgmma {
    int m, n, k;          /* C is m x n, the reduction k deep */
    int gm, gn;           /* the warpgroup grid of C's layout (WGMMA_C) */
    int ni;               /* N of one instruction (IrTileOp.wg_ni) */
    int trans_a, trans_b; /* A stored k x m, B stored n x k */
    int bf16;             /* A and B are bfloat16 (else float16) */
    int clear;            /* clear_accum: the first k16 step does not read C (scale-d 0) */
    int wait;             /* wgmma.wait_group's N after the commit; -1: none (T.wgmma_gemm) */
    IrWgmmaOperand wa, wb; /* the operands' descriptor layouts (IrTileOp.wg) */
} TsCudaWgmma;

/* What kernels with wgmma gemms carry besides (fences, commit, wait). */
extern const char ts_cuda_wgmma_prelude[];
/* The function for p, appended to o. */
void ts_cuda_wgmma_emit(TsBuf *o, const char *name, const TsCudaWgmma *p);
/* The wrapper of p's instruction shape (one per distinct shape: same_wrapper). */
void ts_cuda_wgmma_wrapper(TsBuf *o, const TsCudaWgmma *p);
bool ts_cuda_wgmma_same_wrapper(const TsCudaWgmma *a, const TsCudaWgmma *b);

/* The text around an element offset that swizzles it as z says (z's kind
 * XOR): "TS_SWZ((" or, with column blocks, "TS_SWZ(ts_blk((", and the
 * closing part with z's parameters (arena text). */
const char *ts_cuda_swz_open(const IrSwizzle *z);
const char *ts_cuda_swz_close(TsArena *a, const IrSwizzle *z);

/* Choose p->cm, p->cn from p->m, p->n, p->nwarps. */
void ts_cuda_mma_plan(TsCudaMma *p);

/* The device function `void name(const ts_u16 *A, const ts_u16 *B,
 * float *C, int tid)` for p, appended to o; A, B, C point at element
 * (0, 0) of each matrix, tid is the thread's index in the block. */
void ts_cuda_mma_emit(TsBuf *o, const char *name, const TsCudaMma *p);

/* Register mode (p->creg): `void name(const ts_u16 *A, int a_off, const
 * ts_u16 *B, int b_off, float *C, int tid)`: A and B are the shared tiles'
 * base pointers and a_off / b_off the element offsets of the operands in
 * them (before swizzling), or A is the register array (areg, a_off 0); C
 * is the thread's accumulator registers. */
void ts_cuda_mma_emit_reg(TsBuf *o, const char *name, const TsCudaMma *p);

/* ---- nvrtc.c --------------------------------------------------------------- */

/* 1 if libnvrtc can be opened; otherwise 0 and the reason in why (may be
 * NULL).  Does not keep anything open. */
int ts_nvrtc_available(TsBuf *why);

/* NVRTC's version (nvrtcVersion) into *major, *minor; 1 if it could be
 * opened, else 0 with both 0. */
int ts_nvrtc_version(int *major, int *minor);

/* Compile `code` with NVRTC for `arch` ("sm_80", "sm_90a", "compute_90"):
 * returns a malloc'ed cubin (PTX for compute_*) and its size, or NULL
 * with NVRTC's log in the diagnostic and TS_ERR_BUILD (no longjmp).  A
 * source of no known kernel: the message names none (the builds below are
 * given the kernel's name by their callers). */
unsigned char *ts_nvrtc_compile(TsDiag *d, const char *code, const char *arch, size_t *size);

/* `code` compiled as a build of it would be (the architecture fitted to
 * this NVRTC, the same options), to PTX (ptx != 0, NUL-terminated) or to
 * a cubin: malloc'ed, or NULL with the error in d and TS_ERR_BUILD (no
 * NVRTC, compile errors, no machine code for that architecture).  No
 * cache, no longjmp.  For `tilescale compile --emit ptx|sass`.  A source
 * with NCCL's device API goes to nvcc (ts_nvcc_*, found through opt, which
 * may be NULL; its temporaries in the cache directory).  kname: the
 * kernel's name for NVRTC's error message (NULL: none named). */
unsigned char *ts_nvrtc_emit(TsDiag *d, const char *code, const char *kname, const char *want_arch, int ptx,
                             const TsCompileOptions *opt, size_t *size);

/* The architecture a build targets: $TILESCALE_CUDA_ARCH, else the
 * device's (sm_XY, from the driver), else sm_80. */
void ts_cuda_pick_arch(const char *want, char *arch, size_t n);

/* Compile through the disk cache (key: source, arch, NVRTC version,
 * options) and, when a driver is present, load the module.  opt may be
 * NULL.  Appends "nvrtc <ms>" or "cache hit <ms>", and (loaded)
 * "cuda context <ms>" and "module load <ms>", to
 * timing.  Fails via ts_fail_at: TS_ERR_BUILD (no NVRTC, compile errors
 * with the log, image rejected by the driver, shared memory over the
 * device's limit), TS_ERR_IO (cache directory). */
TsModuleCuda *ts_cuda_build(TsDiag *d, const IrKernel *k, const TsCudaCodeInfo *ci, const char *want_arch,
                            const char *code,
                            const TsCompileOptions *opt, TsBuf *timing);

/* ts_cuda_build's two halves.  The image of `code` for want_arch through
 * the disk cache (NVRTC on a miss, the result written to the cache),
 * malloc'ed, with its size, the architecture it was built for and whether
 * it is PTX; no driver is touched, so any thread may call it (the tiered
 * build's worker does, inside its own ts_try).  lookup_only: a miss
 * returns NULL without compiling.  kname: the kernel's name, which NVRTC's
 * error message gives (the caller knows it; NULL: none named).  Fails via
 * ts_fail_at as ts_cuda_build. */
unsigned char *ts_cuda_image(TsDiag *d, const char *want_arch, const char *code, const char *kname,
                             const TsCompileOptions *opt, int lookup_only, TsBuf *timing, size_t *size, char arch[24],
                             int *ptx);
/* A module owning img (taken, freed on failure too), loaded when a driver
 * is present (errors: load_err, see ts_cuda_module_load); NULL with the
 * error in d (no longjmp). */
TsModuleCuda *ts_cuda_module_new(TsDiag *d, const char *name, const TsCudaCodeInfo *ci, unsigned char *img,
                                 size_t size, const char *arch, int ptx, TsStatus load_err, TsBuf *timing);

/* What a kernel's source asks of the CUDA compiler (toolkit 13 on): ptxas's
 * register-usage and fast-compile levels (TS_CUDA_PTXAS_LEVEL,
 * TS_CUDA_PTXAS_FAST, only for sm_XY) and the front end's fast-compile
 * level (TS_CUDA_NVRTC_FAST), as options NVRTC and nvcc both take, into
 * opts; their number. */
#define TS_CUDA_ASKED_MAX 5
int ts_cuda_asked_opts(const char *code, const char *arch, const char *opts[TS_CUDA_ASKED_MAX]);

/* ---- nvcc.c: kernels NVRTC cannot build (NCCL's device API) ---------------------- */

/* A source containing this line includes NCCL's device API (comm_cuda.c's
 * GIN prelude prints it) and is built by nvcc, not NVRTC (nvcc.c says why). */
#define TS_CUDA_NCCL_MARK "#include <nccl_device.h>\n"

/* The tools such a build uses (ts_nvcc_find). */
typedef struct TsNvcc {
    TsBuf path;  /* the nvcc program */
    TsBuf inc;   /* the directory holding nccl_device.h (real path) */
    TsBuf ident; /* both, by path, size and modification time, and NCCL's version: the cache key's part */
} TsNvcc;

/* Find nvcc and NCCL's headers (opt may be NULL; nvcc.c lists the places);
 * 0, or -1 with the error (every place tried) in d and TS_ERR_BUILD (no
 * longjmp). */
int ts_nvcc_find(TsDiag *d, const TsCompileOptions *opt, TsNvcc *n);
void ts_nvcc_free(TsNvcc *n);

/* Compile text with n's nvcc for arch, PTX (ptx != 0, NUL-terminated) or a
 * cubin, through temporary files <base>.cu.tmp-XXXXXX and
 * <base>.cubin|ptx.tmp-XXXXXX (removed after); malloc'ed, or NULL with
 * nvcc's output in d and TS_ERR_BUILD (TS_ERR_IO: temporaries).  No
 * cache, no longjmp. */
unsigned char *ts_nvcc_compile(TsDiag *d, const TsNvcc *n, const char *text, const char *arch, int ptx,
                               const char *base, size_t *size);

/* ---- tier_cuda.c: the tiered build's background worker ---------------------------- */

/* The full tier of a kernel built on a background thread (pthreads): its
 * code is compiled through the disk cache (ts_cuda_image) while the quick
 * tier runs; the launching thread takes the result (ts_cuda_tier_take),
 * loads it and swaps it in.  Owned by the kernel object; no globals. */
typedef struct TsCudaTier TsCudaTier;
enum { TS_CUDA_TIER_RUNNING = 0, TS_CUDA_TIER_READY = 1, TS_CUDA_TIER_FAILED = 2, TS_CUDA_TIER_TAKEN = 3 };

/* Start building `code` (copied; ci is kept by pointer: it lives in the
 * kernel's arena) for want_arch into the cache directory `cache_dir`.
 * NULL with the error in d when the thread cannot start. */
TsCudaTier *ts_cuda_tier_start(TsDiag *d, const char *name, const TsCudaCodeInfo *ci, const char *want_arch,
                               const char *code, const char *cache_dir);
/* TS_CUDA_TIER_*, without waiting (an atomic read). */
int ts_cuda_tier_state(const TsCudaTier *t);
/* Wait until the build has finished (READY, FAILED or TAKEN). */
int ts_cuda_tier_wait(TsCudaTier *t);
/* The full tier's module, loaded where a driver is present: to the one
 * caller that finds the build READY (any later caller: NULL, state
 * TAKEN); NULL while it runs (wait: 0) or when it failed (the build's or
 * the load's message in d, state FAILED).  *ms: the background build's
 * own time. */
TsModuleCuda *ts_cuda_tier_take(TsCudaTier *t, int wait, TsDiag *d, double *ms);
/* The build's error text ("" if none). */
const char *ts_cuda_tier_error(const TsCudaTier *t);
/* Wait for the build (an NVRTC compile cannot be interrupted; its result
 * lands in the cache for the next process), then free everything. */
void ts_cuda_tier_free(TsCudaTier *t);

/* ---- cuda_drv.c -------------------------------------------------------------- */

/* sm_XY of device 0, 1 on success; 0 if there is no driver or device
 * (reason in why, which may be NULL). */
int ts_cuda_device_arch(char *arch, size_t n, TsBuf *why);

/* Load m->image into the driver (idempotent, thread-safe); when it loads,
 * appends "cuda context <ms>" (driver, primary context) and "module load
 * <ms>" (cuModuleLoadData, the function and its attributes) to timing
 * (may be NULL).  Errors are
 * added to d and returned (no longjmp): TS_ERR_RUNTIME when there is no
 * driver or device, `load_err` (the caller's choice: TS_ERR_BUILD at
 * build time) when the driver rejects the image or the kernel needs more
 * shared memory than the device has. */
TsStatus ts_cuda_module_load(TsDiag *d, TsModuleCuda *m, TsStatus load_err, TsBuf *timing);

/* One launch on host tensors: load if needed, copy every tensor to the
 * device (tensors whose host memory overlaps share one device buffer),
 * launch `a->grid`, wait, copy every tensor back, free.  Errors (CUDA's
 * error names included) are added to d and returned: TS_ERR_RUNTIME,
 * TS_ERR_NOMEM, TS_ERR_SHAPE (grid too large).  timing may be NULL. */
TsStatus ts_cuda_run(TsDiag *d, TsModuleCuda *m, const IrKernel *ir, const TsLaunchArgs *a,
                     TsBuf *timing);

/* One launch on device-resident tensors (a->data are device addresses of
 * element 0; scalars point at host values): load if needed, queue the
 * kernel on `stream` (CUstream, NULL: default stream), do not wait.
 * Errors as ts_cuda_run. */
TsStatus ts_cuda_run_device(TsDiag *d, TsModuleCuda *m, const IrKernel *ir, const TsLaunchArgs *a, void *stream);

/* A launch on device-resident tensors prepared once (the public TsPlan):
 * loads the module and records the kernel parameters of `a` (its extents,
 * strides, shape variables and grid copied; one data slot per parameter,
 * filled from a->data) in a plan owned by m.  ts_cuda_plan_launch queues
 * it on `stream` with the slots' current addresses, errors to d as
 * ts_cuda_run_device.  TS_ERR_UNSUPPORTED for scalar parameters. */
TsStatus ts_cuda_plan_device(TsDiag *d, TsModuleCuda *m, const IrKernel *ir, const TsLaunchArgs *a,
                             struct TsPlan **out);
uint64_t *ts_cuda_plan_slots(struct TsPlan *p);
TsStatus ts_cuda_plan_launch(struct TsPlan *p, void *stream);
/* ts_cuda_plan_launch with the stream and the data addresses taken from
 * `packed` (8-byte words: the CUstream, then one address per parameter;
 * any alignment) instead of the plan's slots, which it leaves alone: no
 * lock needed between threads launching one plan.  ts_cuda_plan_params
 * writes that launch's kernel parameter array into kp (nk entries, its
 * return value; those of the data slots point into addr[nparams]). */
TsStatus ts_cuda_plan_launch_packed(struct TsPlan *p, const void *packed);
int ts_cuda_plan_params(const struct TsPlan *p, const uint64_t *addr, void **kp);
int ts_cuda_plan_nparams(const struct TsPlan *p);
/* ts_cuda_plan_device without loading m (no driver needed: the plan's
 * bookkeeping, tested without a GPU). */
TsStatus ts_cuda_plan_new(TsDiag *d, TsModuleCuda *m, const IrKernel *ir, const TsLaunchArgs *a,
                          struct TsPlan **out);
/* A plan made on a tiered build's quick module, before it is handed out:
 * while the plan still runs that module, each launch asks upgrade(owner)
 * for the module to run now (NULL or the same: stay), and keeps a new one
 * for good.  ts_cuda_plan_module is that choice (what ts_cuda_plan_launch
 * launches); once moved it is two atomic loads, no lock.  Thread-safe as
 * launches. */
void ts_cuda_plan_tiered(struct TsPlan *p, TsModuleCuda *(*upgrade)(void *owner), void *owner);
TsModuleCuda *ts_cuda_plan_module(struct TsPlan *p);

/* A T.alloc_global workspace of a device launch: `bytes` of device memory
 * in m's context (*out its address), and its release (after the work
 * queued on it: cuMemFree synchronizes). */
TsStatus ts_cuda_workspace_alloc(TsDiag *d, TsModuleCuda *m, size_t bytes, uint64_t *out);
void ts_cuda_workspace_free(TsModuleCuda *m, uint64_t p);

void ts_cuda_module_free(TsModuleCuda *m);
/* An unloaded copy of m's image for device `ordinal` (the local world's
 * ranks on other GPUs: a module is loaded in one device's context); NULL
 * when out of memory.  Freed with ts_cuda_module_free. */
TsModuleCuda *ts_cuda_module_clone(const TsModuleCuda *m, int ordinal);

#endif
