# T.int4 storage (issue 8 D): int4 tensors are int8 bytes holding two
# elements each, the low nibble first (TileLang's pack_int4), the last
# extent halved.
#   gemm_nt: TileLang's examples/gemm_int4 matmul_nt_int4 as written there
#     (int4 A, B and shared tiles, T.copy of tiles, T.gemm into int32);
#   quant: a T.Parallel store of int4 elements (x clamped to [-8, 7])
#     into shared memory, copied out whole, plus a T.Parallel read of them
#     back into int32 (both halves of every byte written by one thread).
# tests/unit/test_int4.c runs them on the C target against naive
# references; tests/unit/test_interp_examples.c thread by thread.
import tilelang
import tilelang.language as T


def gemm_nt(M, N, K, block_M, block_N, block_K, threads=128, num_stages=3):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), T.int4),
        B: T.Tensor((N, K), T.int4),
        C: T.Tensor((M, N), T.int32),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.int4)
            B_shared = T.alloc_shared((block_N, block_K), T.int4)
            C_local = T.alloc_fragment((block_M, block_N), T.int32)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[bx * block_N, ko * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def quant(M, N, block_M=16, threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), "int32"), Q: T.Tensor((M, N), T.int4), R: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            Qs = T.alloc_shared((block_M, N), T.int4)
            for i, j in T.Parallel(block_M, N):
                Qs[i, j] = T.max(T.min(X[bx * block_M + i, j], 7), -8)
            T.copy(Qs, Q[bx * block_M, 0])
            for i, j in T.Parallel(block_M, N):
                R[bx * block_M + i, j] = T.Cast("int32", Qs[i, j]) * 3
    return main
