# ARGS: compile FILE --entry gemm_rowstats -D M=64 -D N=128 -D K=64 --target cuda --dump-after layout_inference
# Row reductions across warps (issue 5 E): a 32 x 64 accumulator of 4 warps
# takes a 1 x 4 warp grid (each warp 16 of a row's 64 columns), so after a
# thread's own columns and 2 shuffle steps over the row's 4 lanes, the 4 warps'
# partials meet in a shared scratch of 32 x 4 floats (red_smem): the row's
# first lane in each warp writes, one barrier, every holder of the row
# combines the 4 in warp order.  The reductions run in a loop over K tiles
# here, so a second barrier protects the scratch before the next write.
# tests/unit/test_interp_examples.c runs this kernel thread by thread.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def gemm_rowstats(M, N, K, block_M=32, block_N=64, block_K=32):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), "float16"),
        B: T.Tensor((K, N), "float16"),
        O: T.Tensor((M, N), "float32"),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C = T.alloc_fragment((block_M, block_N), "float32")
            mx = T.alloc_fragment((block_M,), "float32")
            sm = T.alloc_fragment((block_M,), "float32")
            T.clear(C)
            T.clear(sm)
            for k in range(T.ceildiv(K, block_K)):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C)
                T.reduce_sum(C, sm, dim=1, clear=False)
            T.reduce_max(C, mx, dim=1)
            for i, j in T.Parallel(block_M, block_N):
                C[i, j] = C[i, j] - mx[i] + sm[i] * 0.25
            T.copy(C, O[by * block_M, bx * block_N])

    return main
