# GEMM: C = A @ B, tiled TileLang-style (shared-memory tiles, a fragment
# accumulator, a pipelined K loop), and a naive one-row-per-block version
# to check it against:
#
#   tilescale run examples/gemm.py --entry matmul -D M=256 -D N=192 -D K=160 \
#       -D block_M=64 -D block_N=64 -D block_K=32 --check-against matmul_naive
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32", num_stages=3, threads=128):
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

            T.use_swizzle(panel_size=10)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[          T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-100000])
def matmul_naive(M, N, K, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
       65536 with T.Kernel(M, threads=1) as i:
            acc = T.alloc_var(accum_dtype)
            for j in T.serial(N):
                acc = 0
                for k in T.serial(K):
                    acc += T.cast(A[i, k], accum_dtype) * T.cast(B[k, j], accum_dtype)
                C[i, j] = acc

    return main


# The same GEMM in TileLang's eager style: the jit function is the kernel,
# tensors are declared by annotations, shapes by T.const (bound from -D, or
# at launch from the tensors), the output by T.empty.
@tilelang.jit
def matmul_eager(A, B, block_M, block_N, block_K, dtype=T.float16, accum_dtype=T.float32):
    M, N, K = T.const("M, N, K")

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=100000):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)

        T.copy(C_local, C[by * block_M, bx * block_N])

    return C


if __name__ == "__main__":
    kernel = matmul(1024, 1024, 1024, 128, 128, 32)
    import torch

    a = torch.randn(1024, 1024).cuda().half()
    b = torch.randn(1024, 1024).cuda().half()
    torch.testing.assert_close(kernel(a, b), a @ b, rtol=1e-2, atol=1e-2)
