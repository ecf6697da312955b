/*
 * lower_cluster.c — thread block clusters (T.ClusterKernel, IrKernel.cluster)
 * and T.block_rank_in_cluster() (IR_CLUSTER_RANK), on every target.
 *
 * Facts (the CUDA programming guide, "Thread Block Clusters"; PTX ISA,
 * special registers %cluster_ctaid / %cluster_ctarank; tile-ai/tilelang
 * at a35008a, tilelang/language/kernel.py ClusterKernel and
 * cuda/language/cluster.py block_rank_in_cluster): from sm_90 the blocks of
 * a grid may be grouped into clusters of cx x cy x cz blocks, each extent a
 * divisor of the grid's; a cluster is a box of the grid (block (x, y, z)
 * is block (x % cx, y % cy, z % cz) of its cluster) and its blocks run at
 * the same time on one GPU processing cluster.  A block's rank in its
 * cluster is x % cx + (y % cy) cx + (z % cz) cx cy; a kernel launched
 * without clusters is one of 1 x 1 x 1 (rank 0).  `__cluster_dims__(cx,
 * cy, cz)` on the kernel fixes the cluster at compile time, and such a
 * kernel is launched as any other (cuLaunchKernel).
 *
 * Here the pass decides, per target:
 *  - CUDA sm_90 and later: the kernel keeps its cluster (the printer prints
 *    __cluster_dims__) and IR_CLUSTER_RANK stays (printed as a read of
 *    %cluster_ctarank);
 *  - CUDA before sm_90: a kernel with a cluster is refused (the hardware
 *    has none), naming the T.ClusterKernel;
 *  - the C target: no clusters; every block is run and the rank is the
 *    arithmetic above from the block indices (the same number), so code
 *    that splits a tile between the blocks of a cluster (a persistent
 *    scheduler's cluster rows) runs and is checked there.  Nothing a
 *    cluster adds beyond its rank (distributed shared memory, cluster
 *    barriers, multicast) is built, so no other behaviour depends on it.
 * A rank asked for in a kernel without a cluster is 0 everywhere.  Refused
 * with a cluster, at the T.ClusterKernel: T.use_swizzle (pass rasterize
 * renumbers blocks, which would move them between clusters) and a
 * cooperative kernel (split_grid's grid barriers: cuLaunchCooperativeKernel
 * takes no cluster).
 */
#include "pass/pass.h"
#include "ir/walk.h"

static bool native_clusters(const TsPassCtx *cx) {
    return cx->target == TS_TARGET_CUDA && cx->caps->sm >= 90;
}

/* The rank from the block indices (cluster all 1: 0). */
static IrExpr *rank_expr(TsArena *a, const IrKernel *k) {
    IrExpr *r = ir_i32(a, 0), *scale = ir_i32(a, 1);
    for (int i = 0; i < 3; i++) {
        int c = k->cluster[i] ? k->cluster[i] : 1;
        if (c == 1) continue;
        IrExpr *part = ir_bin(a, IR_FLOORMOD, ir_var_ref(a, k->block_idx[i]), ir_i32(a, c));
        r = ir_bin(a, IR_ADD, r, ir_bin(a, IR_MUL, part, scale));
        scale = ir_bin(a, IR_MUL, scale, ir_i32(a, c));
    }
    return r;
}

static IrExpr *lower_rank(IrMutator *m, IrExpr *e) {
    if (e->kind != IR_E_CALL || e->call.fn != IR_CLUSTER_RANK) return e;
    return rank_expr(m->arena, (const IrKernel *)m->ctx);
}

static bool is_rank(const IrExpr *e, void *ctx) {
    (void)ctx;
    return e->kind == IR_E_CALL && e->call.fn == IR_CLUSTER_RANK;
}

void ts_pass_lower_cluster(TsPassCtx *cx) {
    IrKernel *k = cx->k;
    int size = k->cluster[0] ? k->cluster[0] * k->cluster[1] * k->cluster[2] : 1;
    if (k->cluster[0]) {
        if (cx->target == TS_TARGET_CUDA && cx->caps->sm < 90)
            ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, k->cluster_loc,
                       "T.ClusterKernel: thread block clusters need sm_90 or later; the target is sm_%d", cx->caps->sm);
        if (k->swizzle_panel && size > 1)
            ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, k->cluster_loc,
                       "T.ClusterKernel with T.use_swizzle: the swizzle renumbers blocks, which would move them "
                       "between clusters");
        if (k->cooperative && size > 1)
            ts_fail_at(cx->diag, TS_ERR_UNSUPPORTED, k->cluster_loc,
                       "T.ClusterKernel with grid barriers (T.sync_grid or block-scale collectives): a cooperative "
                       "launch takes no cluster");
        if (size == 1) k->cluster[0] = k->cluster[1] = k->cluster[2] = 0; /* a cluster of one block is none */
    }
    if (!ir_stmt_any_expr(k->body, is_rank, NULL)) {
        if (!native_clusters(cx)) k->cluster[0] = k->cluster[1] = k->cluster[2] = 0;
        return;
    }
    if (native_clusters(cx) && k->cluster[0]) return;
    IrMutator m = {.arena = cx->arena, .ctx = k, .post_expr = lower_rank};
    k->body = ir_mutate_stmt(&m, k->body);
    if (!native_clusters(cx)) k->cluster[0] = k->cluster[1] = k->cluster[2] = 0;
}
