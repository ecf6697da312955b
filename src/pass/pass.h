/*
 * pass.h — the pass pipeline.
 *
 * Every pass has the same shape, `void pass(TsPassCtx *)`, and works on
 * cx->k in place (building new nodes in the kernel's arena).  The list of
 * passes, in order, lives in one place: ts_passes[] in passes.c.  Any pass
 * can be named in `--dump-after PASS` to see the IR after it.
 */
#ifndef TS_PASS_H
#define TS_PASS_H

#include "ir/ir.h"
#include "base/caps.h"

typedef struct TsPassCtx {
    TsDiag *diag;
    TsArena *arena; /* the kernel's arena */
    IrKernel *k;
    TsTarget target;
    const TsCaps *caps; /* what the target offers (never NULL) */
} TsPassCtx;

typedef void (*TsPassFn)(TsPassCtx *cx);

typedef struct TsPass {
    const char *name;  /* as given to --dump-after */
    TsPassFn fn;
    const char *what;  /* one line: what it does */
    unsigned targets;  /* where it runs: TS_PASS_ALL, TS_PASS_CUDA or TS_PASS_C */
} TsPass;

#define TS_PASS_ALL 3u  /* every target */
#define TS_PASS_CUDA 2u /* the CUDA target only (bit 1 << TS_TARGET_CUDA) */
#define TS_PASS_C 1u    /* the C target only (bit 1 << TS_TARGET_C) */

/* The pipeline, terminated by {NULL}. */
extern const TsPass ts_passes[];

/* Run every pass in order.  If dump_after names a pass, the IR text after
 * it goes to *dump (unknown names are a TS_ERR_PARAM error).  If timing is
 * non-NULL, "pass <name> <ms>" lines are appended to it. */
void ts_run_passes(TsPassCtx *cx, const char *dump_after, TsBuf *dump, TsBuf *timing);

/* The passes (one file each). */
void ts_pass_verify(TsPassCtx *cx);
/* What the lowered IR asks of cx->target that it lacks: an error at the construct (verify_target.c;
 * pass verify_lowered runs it last). */
void ts_verify_target(TsPassCtx *cx);
void ts_pass_split_grid(TsPassCtx *cx);        /* T.sync_grid at the top level: the rest a second kernel */
void ts_pass_simplify(TsPassCtx *cx);
void ts_pass_lower_cluster(TsPassCtx *cx);     /* thread block clusters: kept (sm_90+), refused, or the rank computed */
void ts_pass_async_copy_c(TsPassCtx *cx);
void ts_pass_fragment_private(TsPassCtx *cx);
void ts_pass_forward_stores(TsPassCtx *cx);
void ts_pass_thread_roles(TsPassCtx *cx);      /* thread-range branches with tile ops become T.ws roles */
void ts_pass_lower_tmem(TsPassCtx *cx);        /* tensor memory and tcgen05 gemms (portable branch) */
void ts_pass_widen_fragments(TsPassCtx *cx);   /* fragments indexed by a T.Parallel nest past their extent */
void ts_pass_check_bounds(TsPassCtx *cx);      /* element accesses provably outside a block-local buffer */
void ts_pass_lower_coll(TsPassCtx *cx);        /* tile-level collectives -> copies, barriers, loops */
void ts_pass_lower_tile_ops(TsPassCtx *cx);
void ts_pass_layout_inference(TsPassCtx *cx);
void ts_pass_shared_to_fragment(TsPassCtx *cx);
void ts_pass_rasterize(TsPassCtx *cx);
void ts_pass_pipeline_planning(TsPassCtx *cx); /* CUDA: stages, multi-buffering, async copies */
void ts_pass_inject_pipeline(TsPassCtx *cx);   /* CUDA: prologue, steady state, waits */
void ts_pass_tier_plan(TsPassCtx *cx);         /* CUDA: size of the cold build, the quick tier's choices */
void ts_pass_index_width(TsPassCtx *cx);       /* CUDA: 32-bit integer arithmetic where it fits */
void ts_pass_split_address(TsPassCtx *cx);     /* CUDA: global addresses as base + loop step */
void ts_pass_partition_threads(TsPassCtx *cx); /* CUDA: the rest of the body to thread-level IR */
void ts_pass_lower_comm(TsPassCtx *cx);        /* CUDA: a block's communication primitive to one thread */
void ts_pass_ws_async_copy(TsPassCtx *cx);     /* CUDA: a T.ws role's copies before its arrive as cp.async */
void ts_pass_ws_role_regs(TsPassCtx *cx);      /* CUDA sm_90a: each T.ws role one region, setmaxnreg per role */
void ts_pass_insert_sync(TsPassCtx *cx);       /* CUDA: barriers where threads share data */
void ts_pass_plan_smem(TsPassCtx *cx);         /* CUDA: shared-memory offsets, padding, reuse, limit */
void ts_pass_thread_loops_c(TsPassCtx *cx);    /* C: thread-dependent code in thread ranges (partition_threads.c) */
void ts_pass_warp_c(TsPassCtx *cx);            /* C: warp primitives in lock-step */
void ts_pass_coro_sync_c(TsPassCtx *cx);       /* C: coroutine kernels' uniform code to one thread, barriers */
void ts_pass_resolve_views(TsPassCtx *cx);     /* views' accesses -> their base's */
void ts_pass_poll_marks(TsPassCtx *cx);        /* blocking kernels: acquire loads, poll loops, release stores */
void ts_pass_wgmma_waits(TsPassCtx *cx);       /* CUDA: the accumulators each T.wait_wgmma completes */

#endif
