# Split-K GEMM as two kernels in one prim_func: the first computes, for each
# of `splits` slices of K, a partial product into a float32 workspace; the
# second sums the partials into C.  (The shape of TileLang's split-KV
# attention: a main kernel, then a combine kernel.)  The naive entry
# computes the same partials and sum with plain loops.
#
#   tilescale run examples/splitk_gemm.py --entry splitk_gemm -D M=96 -D N=80 -D K=256 -D splits=4 \
#       --check-against splitk_gemm_naive
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2, 3])
def splitk_gemm(M, N, K, splits, block_M=32, block_N=32, block_K=32, dtype="float16"):
    k_per_split = T.ceildiv(K, splits)
    assert k_per_split % block_K == 0, "each split must be a whole number of K tiles"

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        Partial: T.Tensor((splits, M, N), "float32"),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), splits, threads=128) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(k_per_split, block_K), num_stages=2):
                T.copy(A[by * block_M, bz * k_per_split + k * block_K], A_shared)
                T.copy(B[bz * k_per_split + k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, acc)
            T.copy(acc, Partial[bz, by * block_M, bx * block_N])

        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            total = T.alloc_fragment((block_M, block_N), "float32")
            part = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(total)
            for s in range(splits):
                T.copy(Partial[s, by * block_M, bx * block_N], part)
                for i, j in T.Parallel(block_M, block_N):
                    total[i, j] += part[i, j]
            T.copy(total, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[2, 3])
def splitk_gemm_naive(M, N, K, splits, dtype="float16"):
    k_per_split = (K + splits - 1) // splits

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        Partial: T.Tensor((splits, M, N), "float32"),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(M, threads=1) as i:
            acc = T.alloc_var("float32")
            total = T.alloc_var("float32")
            for j in T.serial(N):
                total = 0
                for s in T.serial(splits):
                    acc = 0
                    for kk in T.serial(k_per_split):
                        if s * k_per_split + kk < K:
                            acc += T.cast(A[i, s * k_per_split + kk], "float32") * T.cast(B[s * k_per_split + kk, j], "float32")
                    Partial[s, i, j] = acc
                    total += acc
                C[i, j] = total

    return main
