/*
 * test_comm_nvrtc.c — the CUDA code of communication primitives compiles:
 * every kernel of examples/distributed/ (and the misuse kernels of
 * tests/run/dist_bad.py) is compiled for the CUDA target and its source
 * built with NVRTC for sm_80 and sm_90a; the source must carry the
 * world's globals (ts_comm_peer) and the checked address translation,
 * and no thread test, shared word or barrier the IR does not show; and
 * the warp primitives' kernel (tests/run/warp_prims.py) builds too.
 * A primitive under a T.Parallel loop is refused with a clear message.
 * No GPU needed; without libnvrtc the test exits 77 (skipped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/cuda/cuda_target.h"
#include "test.h"
#include "tilescale.h"

typedef struct Case {
    const char *file, *entry;
    TsDefine defs[6];
    int ndefs;
} Case;

static const Case cases[] = {
    {"examples/distributed/put_block.py", "kernel_", {{"M", "4096"}, {"num_rank", "2"}, {"block_M", "512"}, {"threads", "128"}}, 4},
    {"examples/distributed/allgather.py", "allgather", {{"PE_num", "4"}, {"M", "32"}, {"N", "48"}}, 3},
    {"examples/distributed/all_to_all.py", "all_to_all", {{"P", "4"}, {"chunk", "6"}, {"N", "20"}}, 3},
    {"examples/distributed/allreduce.py", "allreduce", {{"P", "4"}, {"N", "200"}}, 2},
    {"examples/distributed/ag_gemm.py", "ag_gemm", {{"P", "4"}, {"M", "64"}, {"N", "96"}, {"K", "64"}}, 4},
    {"examples/distributed/collectives.py", "allreduce", {{"rows", "24"}, {"cols", "40"}}, 2},
    {"examples/distributed/collectives.py", "allgather", {{"rows", "6"}, {"cols", "10"}, {"P", "4"}}, 3},
    {"examples/distributed/collectives.py", "reduce_scatter", {{"rows", "5"}, {"cols", "12"}, {"P", "4"}}, 3},
    {"examples/distributed/collectives.py", "all_to_all", {{"chunk", "3"}, {"cols", "7"}, {"P", "4"}}, 3},
    {"examples/distributed/collectives.py", "shift", {{"rows", "32"}, {"cols", "16"}}, 2},
    {"examples/distributed/seq_parallel_a2a.py", "pre_attn_a2a", {{"P", "4"}, {"B", "2"}, {"H", "8"}, {"S", "16"}, {"D", "8"}}, 5},
    {"examples/distributed/seq_parallel_a2a.py", "post_attn_a2a", {{"P", "4"}, {"B", "2"}, {"H", "8"}, {"S", "16"}, {"D", "8"}}, 5},
    {"examples/distributed/tp_gemm.py", "gemm_allreduce", {{"M", "64"}, {"N", "64"}, {"KP", "32"}}, 3},
    {"examples/distributed/tp_gemm.py", "gemm_rs", {{"M", "64"}, {"N", "64"}, {"KP", "32"}, {"P", "4"}}, 4},
    {"examples/distributed/views.py", "ag_gemm_views", {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"P", "4"}}, 4},
    {"examples/distributed/views.py", "tp_gemm_views", {{"M", "64"}, {"N", "64"}, {"KP", "32"}}, 3},
    {"examples/distributed/tp_gemm.py", "gemm_rs_overlap", {{"M", "256"}, {"N", "64"}, {"KP", "64"}, {"P", "4"}}, 4},
    {"examples/distributed/cannon.py", "cannon", {{"q", "2"}, {"BM", "64"}, {"BN", "64"}, {"BK", "64"}}, 4},
    {"examples/distributed/tile_copy.py", "tile_copy", {{"M", "40"}, {"N", "48"}, {"BM", "16"}, {"BN", "16"}}, 4},
    {"examples/distributed/summa.py", "summa", {{"q", "2"}, {"BM", "64"}, {"BN", "64"}, {"BK", "64"}}, 4},
    {"examples/distributed/warp_prims.py", "warp_prims", {{"M", "65536"}, {"block_M", "4096"}, {"threads", "128"}}, 3},
    {"examples/distributed/per_thread.py", "per_thread", {{"P", "4"}, {"N", "300"}}, 2},
    {"examples/distributed/mem_model.py", "mem_model", {{"P", "4"}, {"N", "200"}}, 2},
    {"examples/distributed/moe.py", "moe", {{"P", "4"}, {"TOK", "16"}, {"H", "32"}, {"E", "2"}, {"K", "2"}}, 5},
    {"tests/run/dist_bad.py", "lonely_wait", {{"P", "4"}}, 1},
    {"tests/run/dist_bad.py", "fail_while_waiting", {{"P", "4"}}, 1},
    {"tests/run/dist_bad.py", "partial_barrier", {{"P", "4"}}, 1},
    {"tests/run/dist_bad.py", "partial_barrier_blocks", {{"P", "4"}}, 1},
    {"tests/run/dist_bad.py", "bad_peer", {{"P", "4"}}, 1},
    {"tests/run/dist_bad.py", "get_past_end", {{"N", "64"}}, 1},
    {"tests/golden/ir_lower_comm.py", "kern", {{"P", "2"}}, 1},
    {"examples/distributed/thread_level.py", "atom_broadcast", {{"NT", "256"}}, 1},
    {"tests/run/warp_prims.py", "warp_prims", {{"B", "2"}, {"TY", "4"}}, 2}, /* warp primitives, no world */
    {"examples/distributed/warp_tiles.py", "warp_tiles", {{"rows", "200"}, {"cols", "33"}}, 2},
    {"examples/distributed/warp_tiles.py", "warp_tiles", {{"rows", "200"}, {"cols", "12"}}, 2},
    {"examples/distributed/warp_tiles.py", "warp_loops", {{"rows", "200"}, {"cols", "24"}}, 2},
    {"examples/distributed/warp_tiles.py", "warp_loops", {{"rows", "200"}, {"cols", "25"}}, 2}, /* a partial last round */
    {"examples/distributed/warp_tiles.py", "warp_tiles", {{"rows", "200"}, {"cols", "5"}}, 2},  /* 40 elements per warp */
    {"examples/distributed/put_block.py", "put_in_roles", {{"N", "3000"}}, 1},
    {"examples/distributed/warp_tiles.py", "wg_tiles", {{"rows", "256"}, {"cols", "48"}}, 2},
    {"examples/scale_gemm.py", "warp_gemm", {{"M", "64"}}, 1}, /* a warp's own gemm, no world */
    {"examples/scale_gemm.py", "wg_gemm", {{"M", "64"}}, 1},   /* a warpgroup's own gemm, no world */
    /* collectives between a block's units (shared scratch, bar.sync 1, threads), no world */
    {"examples/scale_coll.py", "allreduce", {{"level", "warp"}, {"op", "max"}}, 2},
    {"examples/scale_coll.py", "allreduce", {{"level", "warpgroup"}, {"scope", "fragment"}, {"dtype", "float16"}}, 3},
    {"examples/scale_coll.py", "reduce_scatter", {{"level", "warp"}, {"op", "min"}}, 2},
    {"examples/scale_coll.py", "reduce_scatter", {{"level", "warpgroup"}, {"threads", "512"}}, 2},
    {"examples/scale_coll.py", "allgather", {{"level", "warp"}}, 1},
    {"examples/scale_coll.py", "allgather", {{"level", "warpgroup"}}, 1},
    {"examples/scale_coll.py", "all_to_all", {{"level", "warp"}, {"threads", "256"}}, 2},
    {"examples/scale_coll.py", "all_to_all", {{"level", "warpgroup"}}, 1},
    {"examples/scale_coll.py", "wg_gemm_allreduce", {{"M", "64"}}, 1},
};

static const char *IN_PARALLEL =
    "import tilelang.language as T\n"
    "def k(N):\n"
    "    @T.prim_func\n"
    "    def main(x: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(1, threads=64) as (bx):\n"
    "            for i in T.Parallel(N):\n"
    "                T.st(x[i], 1.0, dst_pe=1)\n"
    "                T.barrier_all()\n"
    "    return main\n";

int main(void) {
    TsBuf why = {0};
    if (!ts_nvrtc_available(&why)) {
        printf("skipped: %s\n", ts_buf_str(&why));
        ts_buf_free(&why);
        return 77;
    }
    ts_buf_free(&why);
    TsContext *ctx;
    CHECK_EQ_INT(TS_OK, ts_context_create(&ctx));
    TsCompileOptions o = {0};
    o.target = TS_TARGET_CUDA;
    o.skip_build = 1;
    static const char *const archs[] = {"sm_80", "sm_90a"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const Case *c = &cases[i];
        TsKernel *k = NULL;
        TsStatus st = ts_compile_file(ctx, c->file, c->entry, c->defs, c->ndefs, &o, &k);
        if (st) printf("%s:%s: %s", c->file, c->entry, ts_last_error(ctx));
        CHECK_EQ_INT(TS_OK, st);
        if (!k) continue;
        const char *src = ts_kernel_source(k);
        if (!strcmp(c->entry, "warp_tiles") || !strcmp(c->entry, "warp_loops")) /* a warp's copies: its lanes, __syncwarp around them */
            CHECK_CONTAINS(src, "ts_warp_sync((unsigned)(4294967295u))");
        if (!strcmp(c->file, "tests/run/warp_prims.py")) { /* __shfl_*_sync, __ballot_sync, butterflies */
            CHECK_CONTAINS(src, "__shfl_xor_sync(k, v, m, w)");
            CHECK_CONTAINS(src, "ts_warp_ballot((unsigned)(");
        } else if (!strcmp(c->file, "examples/scale_gemm.py")) { /* each unit's gemm on its own warps' tensor cores */
            CHECK_CONTAINS(src, "mma.sync");
        } else if (!strcmp(c->file, "examples/scale_coll.py")) { /* the units meet at a barrier of the block */
            /* each from its own role's code: barrier.sync, not bar.sync (.aligned: one instruction for
             * all, which synccheck holds the units to on the H200) */
            CHECK_CONTAINS(src, "ts_bar_sync_any(1, ");
            CHECK(!strstr(src, "ts_bar_sync(1, "));
            if (!strcmp(c->entry, "wg_gemm_allreduce")) CHECK_CONTAINS(src, "mma.sync");
        } else {
            CHECK_CONTAINS(src, "__device__ ts_u64 ts_comm_peer[64];");
            CHECK_CONTAINS(src, "ts_comm_addr(");
        }
        if (!strcmp(c->entry, "kernel_")) { /* 16-byte moves in T.put_block, by the threads lower_comm named */
            CHECK_CONTAINS(src, "uint4 *ts_vd");
            CHECK_CONTAINS(src, "const ts_i64 ts_me = (ts_i64)(((ts_i64)ts_tid));");
        }
        /* a put/get in a T.ws role: spread over the role's threads (lower_comm) */
        if (!strcmp(c->entry, "put_in_roles")) CHECK_CONTAINS(src, "const ts_i64 ts_me = (ts_i64)((((ts_i64)ts_tid) - 128LL));");
        /* a warp's remote copy: its lanes share each range (T.put_warp's meaning) */
        if (!strcmp(c->entry, "warp_loops") || !strcmp(c->entry, "warp_tiles")) CHECK_CONTAINS(src, "ts_i += ts_wn");
        /* remote tile copies as ranges of 16-byte moves by the whole block */
        if (!strcmp(c->entry, "tile_copy") || (!strcmp(c->entry, "reduce_scatter") && strcmp(c->file, "examples/scale_coll.py")))
            CHECK_CONTAINS(src, "uint4 *ts_vd");
        /* warp primitives with per-warp ranges: the lanes of a warp share each range */
        if (!strcmp(c->file, "examples/distributed/warp_prims.py")) CHECK_CONTAINS(src, "ts_i += ts_wn");
        /* the printer adds no thread test, shared word or barrier of its own
         * to a primitive (pass lower_comm puts them in the IR) */
        CHECK(strstr(src, "if (ts_tid == 0)") == NULL);
        CHECK(strstr(src, "ts_flag") == NULL);
        CHECK(strstr(src, "    __shared__") == NULL);
        for (int a = 0; a < 2; a++) {
            TsDiag d = {0};
            size_t size = 0;
            unsigned char *img = ts_nvrtc_compile(&d, src, archs[a], &size);
            if (!img) printf("%s:%s (%s): %s\n", c->file, c->entry, archs[a], ts_buf_str(&d.msg));
            CHECK(img != NULL && size > 0);
            free(img);
            ts_buf_free(&d.msg);
        }
        ts_kernel_destroy(k);
    }
    TsKernel *k = NULL;
    TsDefine dn = {"N", "64"};
    CHECK_EQ_INT(TS_ERR_UNSUPPORTED, ts_compile_source(ctx, "par.py", IN_PARALLEL, "k", &dn, 1, &o, &k));
    /* per-thread primitives are fine there (T.st), block-wide barriers are not */
    CHECK_CONTAINS(ts_last_error(ctx), "T.barrier_all under a T.Parallel loop or thread-dependent control flow is not supported on the CUDA target");
    ts_context_destroy(ctx);
    return test_done();
}
