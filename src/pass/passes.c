/*
 * passes.c — the pass pipeline: which passes run, in which order, and the
 * driver that runs them, dumps the IR after one of them and times them.
 *
 * The order today (CUDA-only passes marked *, C-only c):
 *
 *   verify             the elaborator's output is well formed
 *   simplify           fold constants, drop dead code (and group commits and
 *                      waits of a kernel without asynchronous copies)
 *   fragment_private   fragments no T.Parallel loop or tile op touches become
 *                      each thread's local buffer (fragment_private.c)
 * c async_copy_c       C only: T.ptx_cp_async copies as element stores that
 *                      land at once, no group commits or waits (async_copy_c.c)
 *   lower_cluster      (after split_grid) thread block clusters: kept (CUDA
 *                      sm_90+), refused (older), or the block's rank in its
 *                      cluster from its indices (C) (lower_cluster.c)
 *   lower_tmem         tensor memory -> register fragments, T.tcgen05_gemm ->
 *                      T.gemm + its mbarrier arrive (lower_tmem.c)
 *   widen_fragments    a fragment indexed by a T.Parallel nest's own loop
 *                      variables past its declared extent takes the loop's
 *                      extent, with a warning, as in TileLang (widen_fragments.c)
 *   check_bounds       element accesses provably outside a fragment, local
 *                      or shared buffer are errors (check_bounds.c)
 * * pipeline_planning  T.Pipelined: stages, multi-buffered shared tiles,
 *                      async copies (pipeline_planning.c)
 *   lower_coll         tile-level collectives (T.allreduce, ...: between
 *                      ranks or the units of a block) -> copies, barriers,
 *                      loops (lower_coll.c, op/coll.c)
 *   lower_tile_ops     tile operators -> loops of loads and stores (CUDA:
 *                      global -> shared copies as thread-level vector copies)
 *   resolve_views      accesses through views -> accesses of their base
 * * layout_inference   fragment layouts, registers, swizzles
 * * inject_pipeline    prologue and steady state, commits, waits, barriers
 * * rasterize          T.use_swizzle: block renumbering
 * * partition_threads  the remaining block-level code becomes thread-level
 *                      IR: T.Parallel nests spread over the threads, uniform
 *                      stores in a one-thread role, thread-dependent control
 *                      flow in thread ranges (partition_threads.c)
 * * lower_comm         a block's communication primitive to one thread, with
 *                      its shared scratch word where it returns a value
 *                      (lower_comm.c); on both targets, for kernels of
 *                      several nodes: accesses to other nodes' ranks
 *                      through the transport
 * * ws_async_copy      a T.ws role's global -> shared copies before its mbarrier
 *                      arrive as cp.async, the arrive made when they land
 *                      (or a wait for them before it) (ws_async_copy.c)
 * * ws_role_regs       sm_90a: each T.ws role one region, registers moved from
 *                      the producer to the mma role (ws_role_regs.c)
 * * forward_stores     a thread's load of the shared element it just stored reads
 *                      the stored value (forward_stores.c)
 * * insert_sync        barriers only where threads share data (insert_sync.c)
 * * index_width        32-bit integer arithmetic where proven (index_width.c)
 * * plan_smem          shared-memory offsets, row padding, reuse of bytes
 *                      across live ranges, the block's limit (plan_smem.c)
 * c thread_loops_c     C only: code that differs between threads in thread
 *                      ranges, run as loops over the threads (partition_threads.c)
 * c warp_c             C only: thread ranges using warp primitives cut so
 *                      that the warp runs them in lock-step (warp_c.c)
 * c coro_sync_c        C only, coroutine kernels: the block's (a role's)
 *                      uniform statements run by one thread between two
 *                      barriers of the group (coro_sync_c.c)
 * * split_address      global copy addresses as base + step (split_address.c)
 *   poll_marks         blocking kernels: polling loads (acquire), polling
 *                      loops (poll: the C target yields), release stores
 *                      and barriers, for both printers (poll_marks.c)
 *   arch_hints         register hints (setmaxnreg) kept where the target
 *                      architecture has the instruction (sm_90a), dropped
 *                      elsewhere (below)
 * * wgmma_waits        the accumulators each T.wait_wgmma completes, whose
 *                      registers the printer fences after it (wgmma_waits.c)
 *   verify_lowered     well formed, no tile operator left, and nothing the
 *                      target lacks (verify_target.c: instructions,
 *                      atomics' dtypes, per-thread sizes, a C grid the host
 *                      computes...: the checks were the printers')
 *
 * A new pass is a TsPass like those below; list it here too.
 */
#include <string.h>

#include "ir/walk.h"
#include "op/op.h"
#include "pass/pass.h"

void ts_pass_verify(TsPassCtx *cx) { ir_verify(cx->diag, cx->k); }

/* A tile op the target's lowering should have replaced (ops marked with an
 * instruction family are the target code generator's). */
static bool unlowered_tileop(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_TILEOP && s->op->inst == TS_OP_INST_LOOPS;
}

static bool has_tileop(const IrStmt *s) { return ir_stmt_any(s, unlowered_tileop, NULL); }

/* Does the target have PTX's setmaxnreg?  Only the architecture-specific
 * sm_90a (PTX ISA 8.0, setmaxnreg: "requires sm_90a"); plain sm_90 and
 * older, and the C target, do not. */
static bool has_setmaxnreg(const TsCaps *caps) {
    size_t n = strlen(caps->arch);
    return caps->sm == 90 && n > 0 && caps->arch[n - 1] == 'a';
}

static IrStmt *drop_hint(IrMutator *m, IrStmt *s) {
    (void)m;
    if (s->kind == IR_S_EVAL && s->eval.e->kind == IR_E_CALL && s->eval.e->call.fn == IR_SET_MAX_NREG) return NULL;
    return s;
}

static bool is_wgmma(const IrStmt *s, void *ctx) {
    (void)ctx;
    return s->kind == IR_S_TILEOP && s->op->kind == TS_OP_GEMM && s->op->inst == TS_OP_INST_WGMMA;
}

/* A block barrier of a kernel with wgmma gemms: its threads' shared writes
 * (stores, landed cp.async: the generic proxy) may be read by wgmma (the
 * async proxy) after it, so a proxy fence goes first (the writers' side). */
static IrStmt *fence_barrier(IrMutator *m, IrStmt *s) {
    if (s->kind != IR_S_BARRIER || s->barrier.id || s->barrier.idv || s->barrier.async_fence) return s;
    IrStmt *f = ir_stmt(m->arena, IR_S_BARRIER, s->loc);
    f->barrier = s->barrier;
    f->barrier.async_fence = true;
    return f;
}

static IrStmt *drop_wgmma_wait(IrMutator *m, IrStmt *s) {
    (void)m;
    if (s->kind == IR_S_EVAL && s->eval.e->kind == IR_E_CALL &&
        (s->eval.e->call.fn == IR_WGMMA_WAIT || s->eval.e->call.fn == IR_FENCE_PROXY_ASYNC))
        return NULL;
    return s;
}

/* arch_hints: T.wait_wgmma and T.fence_proxy_async stay only in kernels
 * with wgmma gemms (the async proxy's only reader here), whose
 * block barriers fence the async proxy first (IR_S_BARRIER async_fence).
 * TileLang's register hints (T.set_max_nreg, T.inc/dec_max_nreg,
 * the producer/consumer annotations: IR_SET_MAX_NREG statements) stay in
 * the IR where the target architecture has setmaxnreg and are deleted
 * everywhere else, so that the printers print what the IR holds (the CUDA
 * printer used to wrap each in `#if __CUDA_ARCH_FEAT_SM90_ALL`, the C
 * printer skipped it).  Late in the pipeline: the passes before see the
 * kernel as written.  On CUDA it also settles the blocks per SM the kernel
 * is compiled for (IrKernel.min_blocks, __launch_bounds__'s second
 * argument): ws_role_regs' choice where it made one, else the target's
 * (TsCaps.min_blocks, TILESCALE_CUDA_MINBLOCKS), so that the printer prints
 * the IR's number only. */
static void pass_arch_hints(TsPassCtx *cx) {
    if (cx->target == TS_TARGET_CUDA && cx->k->min_blocks <= 0 && cx->caps->min_blocks > 0)
        cx->k->min_blocks = cx->caps->min_blocks;
    /* T.wait_wgmma: only where a gemm runs on wgmma (T.wgmma_gemm is synchronous elsewhere);
     * where one does, the block barriers fence the async proxy first */
    IrMutator w = {.arena = cx->arena, .post_stmt = ir_stmt_any(cx->k->body, is_wgmma, NULL) ? fence_barrier : drop_wgmma_wait};
    cx->k->body = ir_mutate_stmt(&w, cx->k->body);
    if (!cx->k->body) cx->k->body = ir_seq(cx->arena);
    if (has_setmaxnreg(cx->caps)) return;
    IrMutator m = {.arena = cx->arena, .post_stmt = drop_hint};
    cx->k->body = ir_mutate_stmt(&m, cx->k->body);
    if (!cx->k->body) cx->k->body = ir_seq(cx->arena);
}

static void pass_verify_lowered(TsPassCtx *cx) {
    ir_verify(cx->diag, cx->k);
    if (has_tileop(cx->k->body))
        ts_internal(cx->diag, "kernel %s: a tile operator is left after lower_tile_ops",
                    cx->k->name);
    ts_verify_target(cx); /* verify_target.c */
}

const TsPass ts_passes[] = {
    {"verify", ts_pass_verify, "check that the elaborated IR is well formed", TS_PASS_ALL},
    {"simplify", ts_pass_simplify,
     "fold constants, simplify integer arithmetic, drop dead ifs and empty loops", TS_PASS_ALL},
    {"fragment_private", ts_pass_fragment_private,
     "fragments accessed only element by element outside T.Parallel loops and tile operators (each thread its "
     "own elements, TileLang's replicated layout) become local buffers: each thread's registers",
     TS_PASS_ALL},
    {"async_copy_c", ts_pass_async_copy_c,
     "C: T.ptx_cp_async copies land at once (loops of element stores), their group commits and waits go",
     TS_PASS_C},
    {"split_grid", ts_pass_split_grid,
     "T.sync_grid() at the top level of the body: what follows becomes the next kernel of the chain", TS_PASS_ALL},
    {"lower_cluster", ts_pass_lower_cluster,
     "thread block clusters (T.ClusterKernel): kept for CUDA sm_90+ (T.block_rank_in_cluster reads the hardware's "
     "rank), refused before sm_90; on the C target the rank is computed from the block indices",
     TS_PASS_ALL},
    {"thread_roles", ts_pass_thread_roles,
     "`if tid < 256: ... elif tid < 384: ...` branches holding tile ops become T.ws roles of those threads "
     "(whole warps), as TileLang's warp specialization reads them",
     TS_PASS_ALL},
    {"lower_tmem", ts_pass_lower_tmem,
     "Blackwell tensor memory (T.alloc_tmem) and T.tcgen05_gemm on targets without it (all today): a tile used "
     "by one group's uniform code becomes a register fragment, the gemm a T.gemm followed by the one arrive on "
     "its mbarrier the hardware would make; a tile shared by two thread roles is refused (kept in shared memory with "
     "TILESCALE_TMEM_SHARED=1), one used in per-thread code too",
     TS_PASS_ALL},
    {"widen_fragments", ts_pass_widen_fragments,
     "a fragment indexed at exactly a T.Parallel nest's loop variables past its declared extent is widened "
     "to the loop's extent (TileLang gives it the loop's layout, whose domain is the loop's), with a warning",
     TS_PASS_ALL},
    {"check_bounds", ts_pass_check_bounds,
     "element loads and stores of fragments, local and shared buffers whose index provably leaves the "
     "buffer's extent (affine in loop variables whose whole range runs) are errors",
     TS_PASS_ALL},
    {"pipeline_planning", ts_pass_pipeline_planning,
     "T.Pipelined: stages and order of the body's statements, multi-buffered shared tiles, async copies",
     TS_PASS_CUDA},
    {"lower_coll", ts_pass_lower_coll,
     "tile-level collectives (T.allreduce, T.allgather, T.reduce_scatter, T.all_to_all between the ranks or "
     "the warps/warpgroups of a block) become their copies into scratch or staging tiles, barriers of the block "
     "or the world, and the loops that combine them",
     TS_PASS_ALL},
    {"shared_to_fragment", ts_pass_shared_to_fragment,
     "CUDA: shared tiles used only element by element at their own positions (whole copies from/to global "
     "memory, T.Parallel nests) become fragments, for layout_inference to keep in registers",
     TS_PASS_CUDA},
    {"lower_tile_ops", ts_pass_lower_tile_ops,
     "replace tile operators (copy, gemm, reduce, ...) by loops of loads and stores", TS_PASS_ALL},
    {"resolve_views", ts_pass_resolve_views,
     "accesses through buffer views (T.reshape, T.view, T.Tensor over buf.data) become accesses of the "
     "buffers they view",
     TS_PASS_ALL},
    {"layout_inference", ts_pass_layout_inference,
     "CUDA: fragments get layouts (mma.sync accumulators, their rows, cyclic) and live in registers; "
     "T.Parallel loops and row reductions over them become thread-level code; gemm operand tiles get swizzles",
     TS_PASS_CUDA},
    {"inject_pipeline", ts_pass_inject_pipeline,
     "T.Pipelined: prologue and steady state of the planned pipeline, async commits and waits", TS_PASS_CUDA},
    {"tier_plan", ts_pass_tier_plan,
     "CUDA: how many mma.sync per warp the unrolled body holds (a large cold build gets a quick tier first); "
     "in the quick tier the gemms' k16 steps stay a loop and NVRTC compiles at its fast-compile level",
     TS_PASS_CUDA},
    {"rasterize", ts_pass_rasterize,
     "CUDA: T.use_swizzle renumbers a 2-D grid's blocks in serpentine panels of rows (L2 reuse)", TS_PASS_CUDA},
    {"partition_threads", ts_pass_partition_threads,
     "CUDA: T.Parallel nests spread over the threads, uniform stores by one thread, thread-dependent "
     "control flow in thread ranges: the body becomes entirely thread-level IR",
     TS_PASS_CUDA},
    {"lower_comm", ts_pass_lower_comm,
     "CUDA: a communication primitive of uniform code (st, signal, atom_add, wait, block barriers, a put's "
     "signal) done by one thread in a thread range, T.atom_add's returned value through a shared word; "
     "multi-node kernels (both targets): an access to a peer of another node through the transport",
     TS_PASS_ALL},
    {"ws_async_copy", ts_pass_ws_async_copy,
     "CUDA: a T.ws role's vector copies from global to shared memory before its mbarrier arrive become cp.async "
     "and the arrive is made when they land (cp.async.mbarrier.arrive.noinc), or after a wait for them "
     "(cp.async.wait_group 0) where the producer has other stores to release, sm_80+",
     TS_PASS_CUDA},
    {"ws_role_regs", ts_pass_ws_role_regs,
     "CUDA, sm_90a: a warp-specialised kernel of a producer role and a tensor-core role runs each role as "
     "one region of its own (its own copy of each loop), the producer gives registers to the mma role "
     "(setmaxnreg dec/inc) and the kernel is compiled for two blocks per SM, where their arrays and shared "
     "memory fit",
     TS_PASS_CUDA},
    {"forward_stores", ts_pass_forward_stores,
     "CUDA: a thread's load of the shared element it stored earlier in the same thread-level sequence (no "
     "synchronisation or other store of the buffer between) reads its own value from a register",
     TS_PASS_CUDA},
    {"insert_sync", ts_pass_insert_sync,
     "CUDA: barriers only where a thread reads shared memory another wrote, or overwrites what others "
     "may still read (loop back edges and cp.async waits included)",
     TS_PASS_CUDA},
    {"index_width", ts_pass_index_width,
     "CUDA: prove every signed integer value (indices, loop ends, flattened offsets) fits in int32; "
     "the code generator then computes them in 32 bits",
     TS_PASS_CUDA},
    {"plan_smem", ts_pass_plan_smem,
     "CUDA: each shared buffer's offset in dynamic shared memory (buffers whose live ranges are apart share "
     "bytes, across a barrier), row padding of unswizzled tensor-core tiles, the block's limit",
     TS_PASS_CUDA},
    {"thread_loops_c", ts_pass_thread_loops_c,
     "C: code that differs between the threads (T.get_thread_binding) in thread ranges, which the C target "
     "runs as loops over the block's threads; varying lets and private buffers get a copy per thread",
     TS_PASS_C},
    {"warp_c", ts_pass_warp_c,
     "C: thread ranges that use warp primitives (shuffles, votes, warp reductions) become a sequence of "
     "ranges running the warp in lock-step, each call's operands exchanged through per-thread words",
     TS_PASS_C},
    {"coro_sync_c", ts_pass_coro_sync_c,
     "C, kernels whose threads run as coroutines: each run of the block's (a T.ws role's) uniform statements "
     "becomes one thread's (a solo role) between two barriers of the block (the role), ids 16 and up",
     TS_PASS_C},
    {"split_address", ts_pass_split_address,
     "CUDA: each vector copy's global address in a loop becomes a base fixed per thread plus the loop's step "
     "(indices written base + step), so that NVVM finds one base instead of taking every unrolled sum apart",
     TS_PASS_CUDA},
    {"poll_marks", ts_pass_poll_marks,
     "blocking kernels (blocks or ranks waiting for each other through global memory): global loads in while loops "
     "are polling loads (acquire), loops that read global memory poll (the C target yields, as in every loop of a "
     "thread_coro kernel), global stores and block barriers release",
     TS_PASS_ALL},
    {"arch_hints", pass_arch_hints,
     "register hints (T.set_max_nreg, T.inc/dec_max_nreg, the producer/consumer register annotations) stay where "
     "the target architecture has setmaxnreg (sm_90a) and are dropped elsewhere (sm_80, sm_90, the C target); "
     "CUDA: the blocks per SM the kernel is compiled for (IrKernel.min_blocks) from the target where no pass chose",
     TS_PASS_ALL},
    {"wgmma_waits", ts_pass_wgmma_waits,
     "CUDA: each T.wait_wgmma lists the accumulators of the wgmma groups it may complete (those issued before "
     "it and not yet waited for, on some path), whose registers the printer fences after the wait",
     TS_PASS_CUDA},
    {"verify_lowered", pass_verify_lowered,
     "check the lowered IR is well formed, has no tile operator left and asks for nothing the target lacks "
     "(CUDA: T.mbarrier_expect_tx below sm_90, atomics on dtypes without instructions, a T.call_extern value of a "
     "16-, 8- or 4-bit float, a block-wide barrier in per-thread code, per-thread buffers over 2^20 elements; C: "
     "a grid the host cannot compute, atomics on bools, T.sync_grid among coroutine threads)",
     TS_PASS_ALL},
    {NULL, NULL, NULL, 0},
};

void ts_run_passes(TsPassCtx *cx, const char *dump_after, TsBuf *dump, TsBuf *timing) {
    if (dump_after && *dump_after) {
        bool known = false;
        for (const TsPass *p = ts_passes; p->name; p++) known |= !strcmp(p->name, dump_after);
        if (!known) {
            TsBuf names = {0};
            for (const TsPass *p = ts_passes; p->name; p++)
                ts_buf_printf(&names, "%s%s", p == ts_passes ? "" : ", ", p->name);
            const char *list = ts_strdup(cx->arena, ts_buf_str(&names));
            ts_buf_free(&names);
            ts_fail_at(cx->diag, TS_ERR_PARAM, (TsLoc){0},
                       "unknown pass '%s' for --dump-after; valid passes: %s", dump_after, list);
        }
    }
    /* external CUDA source (T.import_source / T.call_extern) runs on the GPU only */
    if (cx->target != TS_TARGET_CUDA && ir_kernel_has_extern(cx->k))
        ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, cx->k->extern_loc,
                   "kernel '%s' uses external CUDA source (T.import_source / T.call_extern), which the C target "
                   "cannot run; compile it for CUDA (--target cuda)",
                   cx->k->name ? cx->k->name : "?");
    for (const TsPass *p = ts_passes; p->name; p++) {
        if (!(p->targets & (1u << cx->target))) continue;
        double t0 = ts_now_ms();
        p->fn(cx);
        double t1 = ts_now_ms();
        if (timing) ts_buf_printf(timing, "pass %s %.3f\n", p->name, t1 - t0);
        if (dump && dump_after && !strcmp(p->name, dump_after)) ir_print_kernel(dump, cx->k);
    }
}
