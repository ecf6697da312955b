# ARGS: compile FILE --entry swizzled_copy --target cuda --dump-after insert_sync
# insert_sync on global stores whose indices share a block-uniform term:
# T.use_swizzle makes the block indices lets of selects and casts over the
# run-time extents M and N.  Two threads meet in the store of the tile back
# to C only if the indices less their common by * 64 and bx * 64 are equal;
# taken whole, the difference "might wrap" and the store was once refused as
# a race inside one thread range (the gemm examples of TileLang with
# T.use_swizzle and T.const shapes).  The renumbered bx and by now keep the
# block indices' ranges (rasterize marks them, IrVar.grid_perm), so the store
# is 8-element vector copies (C[by * 64 + (t + r * 64) // 8, bx * 64 +
# (t + r * 64) % 8 * 8], the columns of a partial tile one by one).
# Expected: compiles, no barrier inside the thread ranges.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def swizzled_copy(block_M=64, block_N=64):
    M = T.symbolic("M")
    N = T.symbolic("N")

    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=64) as (bx, by):
            S = T.alloc_shared((block_M, block_N), "float16")
            L = T.alloc_fragment((block_M, block_N), "float32")
            T.use_swizzle(4)
            T.copy(A[by * block_M, bx * block_N], S)
            T.gemm(S, S, L)
            T.copy(L, S)
            T.copy(S, C[by * block_M, bx * block_N])

    return main
