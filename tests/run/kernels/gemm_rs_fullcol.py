# A decode-style attention whose two gemms split their warps over columns
# (T.GemmWarpPolicy.FullCol: a few query rows, many key/value columns) and
# whose second gemm takes its A operand, the probabilities p, from a
# register fragment.  With every warp owning columns of the output, each
# warp needs all of p's rows and columns: layout inference gives p the
# MMA_A layout (replicated over the warp columns), which TileLang's
# persistent MLA decode needs to keep its fragments in registers.  The
# tiles are handed out by a persistent wave loop whose work sits in one
# `if` (the last wave has idle blocks), as in that example: plan_smem
# treats the if's branch as a list of its own, so the two row reductions
# of one iteration can share their scratch.
#
#   direct=0: p is filled from a shared copy of the scores (the example's
#             way); direct=1: T.copy(s, p) between the two layouts.
# tests/unit/test_interp_examples.c runs both thread by thread against the
# C target; tests/golden/ir_gemm_rs_fullcol.py pins the layouts.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def decode_fullcol(B, H, S, D, block_H=16, block_N=32, nblocks=3, threads=128, direct=0):
    groups = H // block_H
    tiles = B * groups
    waves = T.ceildiv(tiles, nblocks)
    scale = 0.125

    @T.prim_func
    def main(
        Q: T.Tensor((B, H, D), "float16"),
        KV: T.Tensor((B, S, D), "float16"),
        O: T.Tensor((B, H, D), "float32"),
    ):
        with T.Kernel(nblocks, threads=threads) as bid:
            Qs = T.alloc_shared((block_H, D), "float16")
            KVs = T.alloc_shared((block_N, D), "float16")
            Ps = T.alloc_shared((block_H, block_N), "float16")
            s = T.alloc_fragment((block_H, block_N), "float32")
            p = T.alloc_fragment((block_H, block_N), "float16")
            o = T.alloc_fragment((block_H, D), "float32")
            m = T.alloc_fragment((block_H,), "float32")
            m_prev = T.alloc_fragment((block_H,), "float32")
            rs = T.alloc_fragment((block_H,), "float32")
            l = T.alloc_fragment((block_H,), "float32")
            for w in T.serial(waves):
                t = w * nblocks + bid
                b = t // groups
                g = t % groups
                if t < tiles:
                    T.copy(Q[b, g * block_H:(g + 1) * block_H, :], Qs)
                    T.fill(o, 0)
                    T.fill(l, 0)
                    T.fill(m, -T.infinity("float32"))
                    for k in T.Pipelined(S // block_N, num_stages=2):
                        T.copy(KV[b, k * block_N:(k + 1) * block_N, :], KVs)
                        T.gemm(Qs, KVs, s, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
                        T.copy(m, m_prev)
                        T.reduce_max(s, m, dim=1, clear=False)
                        for i, j in T.Parallel(block_H, block_N):
                            s[i, j] = T.exp2((s[i, j] - m[i]) * scale)
                        T.reduce_sum(s, rs, dim=1)
                        for i in T.Parallel(block_H):
                            l[i] = l[i] * T.exp2((m_prev[i] - m[i]) * scale) + rs[i]
                        for i, j in T.Parallel(block_H, D):
                            o[i, j] *= T.exp2((m_prev[i] - m[i]) * scale)
                        if direct:
                            T.copy(s, p)
                        else:
                            T.copy(s, Ps)
                            T.copy(Ps, p)
                        T.gemm(p, KVs, o, policy=T.GemmWarpPolicy.FullCol)
                    for i, j in T.Parallel(block_H, D):
                        o[i, j] /= l[i]
                    T.copy(o, O[b, g * block_H:(g + 1) * block_H, :])

    return main


# The AMD MLA decode's shape on one warp: the output accumulator o (16 x 512
# float32 on 32 threads: 256 registers) is over the register budget and stays
# in shared memory, while the float16 Q tile (256 halves, 128 registers packed)
# and p stay in registers; the second gemm, A in registers and its accumulator
# in shared memory, reads p from a shared copy of its registers
# (ts_layout_spill).  tests/unit/test_interp_examples.c runs it.
@tilelang.jit(out_idx=[2])
def decode_over_budget(B, H, S, D, block_H=16, block_N=32, threads=32, annotate=0):
    scale = 0.125

    @T.prim_func
    def main(
        Q: T.Tensor((B, H, D), "float16"),
        KV: T.Tensor((B, S, D), "float16"),
        O: T.Tensor((B, H, D), "float32"),
    ):
        with T.Kernel(B, H // block_H, threads=threads) as (bx, by):
            Ql = T.alloc_fragment((block_H, D), "float16")
            KVs = T.alloc_shared((block_N, D), "float16")
            s = T.alloc_fragment((block_H, block_N), "float32")
            p = T.alloc_fragment((block_H, block_N), "float16")
            o = T.alloc_fragment((block_H, D), "float32")
            m = T.alloc_fragment((block_H,), "float32")
            m_prev = T.alloc_fragment((block_H,), "float32")
            rs = T.alloc_fragment((block_H,), "float32")
            l = T.alloc_fragment((block_H,), "float32")
            if annotate:
                # a swizzle asked for a tile the shared-accumulator gemm reads:
                # layout inference drops it (op/gemm.c plain_operand)
                T.annotate_layout({KVs: tilelang.layout.make_swizzled_layout(KVs)})
            T.copy(Q[bx, by * block_H:(by + 1) * block_H, :], Ql)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m, -T.infinity("float32"))
            for k in T.Pipelined(S // block_N, num_stages=1):
                T.copy(KV[bx, k * block_N:(k + 1) * block_N, :], KVs)
                T.gemm(Ql, KVs, s, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(m, m_prev)
                T.reduce_max(s, m, dim=1, clear=False)
                for i, j in T.Parallel(block_H, block_N):
                    s[i, j] = T.exp2((s[i, j] - m[i]) * scale)
                T.reduce_sum(s, rs, dim=1)
                for i in T.Parallel(block_H):
                    l[i] = l[i] * T.exp2((m_prev[i] - m[i]) * scale) + rs[i]
                for i, j in T.Parallel(block_H, D):
                    o[i, j] *= T.exp2((m_prev[i] - m[i]) * scale)
                T.copy(s, p)
                T.gemm(p, KVs, o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_H, D):
                o[i, j] /= l[i]
            T.copy(o, O[bx, by * block_H:(by + 1) * block_H, :])

    return main
