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
    TsModuleCuda *cumod; /* compiled CUDA module (TS_TARGET_CUDA) */
    /* A prim_func with several `with T.Kernel` blocks compiles to a chain:
     * the next kernel, launched after this one on the same arguments (its
     * IR lives in the head's arena; its IR text and timing go to the head).
     * Owned by this one. */
    TsKernel *next;
};

#endif
