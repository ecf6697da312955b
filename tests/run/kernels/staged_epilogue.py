# A GEMM whose epilogue is staged through shared memory, as users write it
# (T.copy(C_local, C_shared); T.copy(C_shared, C)), with T.use_swizzle:
# the store of C_shared must be 16-byte vector copies (the renumbered block
# indices keep the grid's ranges, pass rasterize), and the result must match
# the naive GEMM (tests/run/staged_epilogue.sh; on a GPU:
# tilescale run tests/run/kernels/staged_epilogue.py --entry matmul_staged
#     -D M=1000 -D N=1000 -D K=1000 --target cuda --check-against matmul_naive).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_staged(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32",
                  num_stages=3, threads=128):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)

            T.use_swizzle(panel_size=4)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def matmul_naive(M, N, K, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(M, threads=1) as i:
            acc = T.alloc_var(accum_dtype)
            for j in T.serial(N):
                acc = 0
                for k in T.serial(K):
                    acc += T.cast(A[i, k], accum_dtype) * T.cast(B[k, j], accum_dtype)
                C[i, j] = acc

    return main
