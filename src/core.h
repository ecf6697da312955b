/*
 * core.h — what the public handles TsContext and TsKernel hold, shared by
 * the API (driver/api.c), the CLI-independent compile driver and the
 * targets.
 */
#ifndef TS_CORE_H
#define TS_CORE_H

#include "base/base.h"
#include "ir/ir.h"
#include "base/caps.h"

struct TsContext {
    TsDiag diag;        /* last failure's text and code */
    TsArena scratch;    /* results handed out by ts_list_entries and ts_cache_info/clean (until the next call) */
};

/* A target's compiled module (one per kernel). */
typedef struct TsModuleC TsModuleC; /* target/c */
typedef struct TsModuleCuda TsModuleCuda; /* target/cuda */
typedef struct TsCudaTier TsCudaTier; /* target/cuda: a full tier built in the background */

struct TsKernel {
    TsContext *ctx;
    TsArena arena;      /* the kernel's IR and strings */
    TsSource src;       /* owns a copy of the source text */
    IrKernel *ir;       /* after all passes */
    TsTarget target;
    TsCompileOptions opt;
    TsCaps caps;        /* target capabilities and path switches (set once by the driver) */
    TsBuf code;         /* generated source */
    TsBuf ir_text;      /* IR after opt.dump_after, or final IR */
    TsBuf timing;       /* "phase ms" lines */
    TsModuleC *cmod;    /* loaded C module (TS_TARGET_C) */
    TsModuleCuda *_Atomic cumod; /* compiled CUDA module (TS_TARGET_CUDA); atomic: a tiered build
                                   swaps the full tier in while other threads may launch */
    /* A tiered CUDA build (TsCompileOptions.tiered, api.c): */
    int tier_kind;               /* TS_TIER_* now running (__atomic loads and stores) */
    TsCudaTier *tier;            /* the full tier's background build (tier_cuda.c), until freed */
    TsModuleCuda *cumod_quick;   /* the quick tier's module once swapped out: kept until the kernel
                                    is freed (a launch on another thread may still use it) */
    TsBuf quick_code;            /* the quick tier's generated source ("" when not tiered) */
    const void *tier_src;        /* during ts_compile_*: what the quick tier's elaboration needs (api.c) */
    /* A prim_func with several `with T.Kernel` blocks compiles to a chain:
     * the next kernel, launched after this one on the same arguments (its
     * IR lives in the head's arena; its IR text and timing go to the head).
     * Owned by this one. */
    TsKernel *next;
};

/* Swap a kernel's finished full tier in (api.c; launch.c calls it before
 * each launch with wait 0). */
TsStatus ts_kernel_tier_install(TsKernel *k, int wait, TsDiag *d);
/* A plan just prepared on k (api.c's ts_kernel_prepare_device): where k is
 * a tiered build still on its quick tier, its launches move to the full
 * tier once a launch finds it done (target/cuda's ts_cuda_plan_tiered). */
void ts_kernel_plan_tiered(TsKernel *k, struct TsPlan *plan);

#endif
