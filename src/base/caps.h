/*
 * caps.h — what the target offers and which of its paths a compile uses.
 *
 * The compile driver (driver/api.c) fills one TsCaps per compile, once,
 * from the target, the architecture it compiles for and the environment
 * (the only place TILESCALE_CUDA_* switches are read); passes, tile-op
 * lowerings and code generators read it from their context and never look
 * at the environment themselves.  The switches exist for before/after
 * benchmarks and bisecting: every path they turn off has a correct
 * fallback.
 */
#ifndef TS_CAPS_H
#define TS_CAPS_H

#include <stdbool.h>

/* TsCaps.mma_prefetch bits: the split itself (K tiles of four or more k16
 * steps); also with two steps; the stage's copies issued right after the
 * barrier that ends its last reader, one k16 step before the next stage's
 * first fragment loads (before the TAIL part); where the gemm is not split,
 * its first k16 step's fragments loaded right after the barrier, before the
 * stage's copies are issued (PRE, copies, REST). */
enum { TS_PREFETCH_SPLIT = 1, TS_PREFETCH_TWO_STEPS = 2, TS_PREFETCH_EARLY_COPY = 4, TS_PREFETCH_LOAD_FIRST = 8,
       TS_PREFETCH_DEFAULT = TS_PREFETCH_SPLIT | TS_PREFETCH_EARLY_COPY };

/* TsCaps.wgmma_inflight: how a pipelined loop's wgmma gemm over the stage
 * tiles leaves its group in flight (inject_pipeline): not at all (each gemm
 * waits for its own group), waited for (wait_group 0) before the next
 * step's barrier with the gemm issued before the step's copies (TOP), or
 * (ONE) waited for down to one group (wait_group 1) right
 * after the next gemm is issued, then a barrier before the copies refill
 * the slot the older group read, or (SLOT, num_stages >= 3) one slot kept
 * for the pending group: the copies one step less ahead, one barrier per step.
 * AUTO (the default): OFF with two stages, TOP with three or more (the H200's
 * batch 1 of 2026-12-02: bench/RESULTS.md). */
enum { TS_WGMMA_INFLIGHT_OFF = 0, TS_WGMMA_INFLIGHT_TOP = 1, TS_WGMMA_INFLIGHT_ONE = 2, TS_WGMMA_INFLIGHT_SLOT = 3,
       TS_WGMMA_INFLIGHT_AUTO = 4 };

typedef struct TsCaps {
    char arch[24];    /* CUDA: "sm_90a", "sm_80", "compute_90"; "" on the C target */
    int sm;           /* CUDA: compute capability x 10 (80, 90); 0 on the C target */
    long long smem_max; /* CUDA: dynamic shared memory a block may use, bytes; 0 on the C target */
    bool mma;         /* T.gemm on tensor cores (mma.sync) where eligible (TILESCALE_CUDA_MMA=0: off) */
    bool wgmma;       /* sm_90a only: T.gemm on wgmma.mma_async where eligible (TILESCALE_CUDA_WGMMA=0:
                       * off, mma.sync; doc/HOPPER.md) */
    int wgmma_inflight; /* TS_WGMMA_INFLIGHT_* (TILESCALE_CUDA_WGMMA_INFLIGHT=0/1/2/3; default AUTO) */
    bool vec;         /* vectorized (16-byte) tile copies (TILESCALE_CUDA_VEC=0: off) */
    bool pad;         /* pad rows of unswizzled tensor-core operand tiles (TILESCALE_CUDA_PAD=0: off) */
    bool vec_cast;    /* vectorized casting copies (TILESCALE_CUDA_VEC=nocast: off) */
    bool layout;      /* fragments in registers by layout inference (TILESCALE_CUDA_LAYOUT=0: off) */
    bool ws_layout;   /* ... in kernels with T.ws roles too, over each role's threads
                       * (TILESCALE_CUDA_WS_LAYOUT=0: off) */
    int ws_async;     /* a T.ws role's global -> shared copies before its mbarrier arrive are
                       * cp.async (pass ws_async_copy), handed over as TS_WS_ASYNC_* says
                       * (TILESCALE_CUDA_WS_ASYNC=0: plain copies; =noinc, =wait, =mbar: that form) */
    bool swizzle;     /* XOR-swizzled shared tiles for tensor-core operands (TILESCALE_CUDA_SWIZZLE=0: off) */
    bool pipeline;    /* T.Pipelined as a multi-stage cp.async pipeline (TILESCALE_CUDA_PIPELINE=0: off) */
    int min_blocks;   /* blocks per SM the kernel is compiled for: __launch_bounds__'s second
                       * argument, capping registers (TILESCALE_CUDA_MINBLOCKS=N; 0: none) */
    int mma_prefetch; /* a pipelined tensor-core gemm loads the next stage's first operand
                       * fragments across the loop's barrier (inject_pipeline): 0 off, else
                       * bits TS_PREFETCH_* (TILESCALE_CUDA_PREFETCH=N; 0: off) */
    bool index32;     /* 32-bit integer arithmetic where proven to fit (TILESCALE_CUDA_INDEX32=0: off) */
    int l2_prefetch;  /* 16-byte cp.async copies ask L2 to fetch this many bytes around them
                       * (.L2::64B/128B/256B; TILESCALE_CUDA_L2_PREFETCH=N; 0: no hint, the default) */
    bool split_addr;  /* global copy addresses as base + loop step, pass split_address (TILESCALE_CUDA_SPLIT_ADDR=0: off) */
    bool store_align; /* shared<->global vector copies of compact parameters proven aligned (TILESCALE_CUDA_STORE_ALIGN=0: tested per vector) */
    int smem_reuse;   /* plan_smem lets shared buffers with disjoint live ranges share bytes:
                       * TS_SMEM_REUSE_* (TILESCALE_CUDA_SMEM_REUSE=0: never, =1: whenever it
                       * saves bytes; default: only for a block that does not fit without it) */
    int ptxas_fast;   /* TS_PTXAS_FAST_* (TILESCALE_CUDA_PTXAS_FAST=1: every pipelined tensor-core
                       * loop, =2: the large ones; default and 0: never) */
    bool multinode;   /* the kernel's world may span several nodes (TsCompileOptions.multinode):
                       * pass lower_comm sends an access to a rank of another node through the
                       * transport instead of a load or store (IrTileOp.xport) */
    bool quick_tier;  /* CUDA: this compile is a kernel's quick tier (TsCompileOptions.tiered):
                       * pass tier_plan rolls the gemms' k16 loops and asks NVRTC for its
                       * fast-compile level; the driver also turns mma_prefetch off (a gemm
                       * split across the pipeline's barrier doubles the unrolled body) */
    bool check_bounds; /* every buffer access checked against its extents (C: on unless
                        * TsCompileOptions.check_bounds < 0; CUDA: only when > 0) */
    bool tmem_shared; /* both targets: a tensor-memory tile used by two thread groups is kept in
                       * shared memory instead of refused (pass lower_tmem; TILESCALE_TMEM_SHARED=1,
                       * off by default until the H200's compute-sanitizer passes it) */
} TsCaps;

/* TsCaps.ws_async (sm_80 and later): how a T.ws producer hands its
 * cp.async copies over (pass ws_async_copy).  NOINC (the default):
 * cp.async.mbarrier.arrive.noinc alone, the arrival made when they have
 * landed being the thread's own (only where the producer has no other
 * stores to release; else WAIT); WAIT: the thread commits them and waits
 * for them (cp.async.wait_group 0) before its plain mbarrier arrive; MBAR:
 * cp.async.mbarrier.arrive, then the arrive (the phase completes once they
 * have landed; the thread never waits for them itself), which
 * compute-sanitizer 2025.3's synccheck reports as "Missing wait" (a false
 * positive by its 2025.4 release notes; bench/ws_async_variants.sh). */
enum { TS_WS_ASYNC_OFF = 0, TS_WS_ASYNC_WAIT = 1, TS_WS_ASYNC_MBAR = 2, TS_WS_ASYNC_NOINC = 3 };

/* TsCaps.smem_reuse.  FIT is the default: a kernel that fits without reuse
 * keeps the plain layout byte for byte (no added barrier), one that does
 * not fit is laid out with reuse. */
enum { TS_SMEM_REUSE_OFF = 0, TS_SMEM_REUSE_ALWAYS = 1, TS_SMEM_REUSE_FIT = 2 };

/* TsCaps.ptxas_fast: which kernels ask ptxas for its fast-compile level
 * (inject_pipeline decides, IrKernel.ptxas_fast_compile): none (the
 * default: it halves ptxas's time on the large tensor-core bodies but cost
 * 4-15% of kernel time on the H200); every kernel with a pipelined
 * tensor-core loop; only those whose loop body unrolls to 128 or more
 * mma.sync per warp. */
enum { TS_PTXAS_FAST_OFF = 0, TS_PTXAS_FAST_ALL = 1, TS_PTXAS_FAST_LARGE = 2 };

#endif
