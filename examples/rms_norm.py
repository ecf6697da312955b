# RMSNorm without weight: B = A / sqrt(mean(A^2) + eps), row by row, in the
# two forms of TileLang's example: split-K (a running sum of squares over K
# tiles, then a second pass that reads the row again) and the row form
# (rms_norm_row: the block's rows read once and normalized on chip), with a
# naive reference.
#
#   tilescale run examples/rms_norm.py --entry rms_norm -D M=96 -D N=320 --check-against rms_norm_naive
#   tilescale run examples/rms_norm.py --entry rms_norm_row -D M=96 -D N=1024 --check-against rms_norm_naive
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rms_norm(M, N, blk_m=32, blk_k=128, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_shared = T.alloc_shared((blk_m, blk_k), dtype)
            A_local = T.alloc_fragment((blk_m, blk_k), dtype)
            A_powsum = T.alloc_fragment((blk_m,), dtype)

            num_k_step = T.ceildiv(N, blk_k)
            T.clear(A_local)
            for k in range(num_k_step):
                T.copy(A[bx * blk_m, k * blk_k], A_shared)
                for i, j in T.Parallel(blk_m, blk_k):
                    A_local[i, j] += A_shared[i, j] * A_shared[i, j]
            T.reduce_sum(A_local, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + 1e-12)

            for k in range(num_k_step):
                # reverse order, better cache hit rate
                T.copy(A[bx * blk_m, (num_k_step - 1 - k) * blk_k], A_shared)
                for i, j in T.Parallel(blk_m, blk_k):
                    A_shared[i, j] *= A_powsum[i]
                T.copy(A_shared, B[bx * blk_m, (num_k_step - 1 - k) * blk_k])

    return main


@tilelang.jit(out_idx=[-1])
def rms_norm_row(M, N, blk_m=1, dtype="float32"):
    # The row form (TileLang's own benchmark configuration: one row per
    # block): the block's rows are read from global memory once and
    # normalized on chip (A_shared becomes a register tile, each row spread
    # over the 4 warps).
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_shared = T.alloc_shared((blk_m, N), dtype)
            A_local = T.alloc_fragment((blk_m, N), dtype)
            A_powsum = T.alloc_fragment((blk_m,), dtype)

            T.copy(A[bx * blk_m, 0], A_shared)
            for i, j in T.Parallel(blk_m, N):
                A_local[i, j] = A_shared[i, j] * A_shared[i, j]
            T.reduce_sum(A_local, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + 1e-12)
            for i, j in T.Parallel(blk_m, N):
                A_shared[i, j] *= A_powsum[i]
            T.copy(A_shared, B[bx * blk_m, 0])

    return main


@tilelang.jit(out_idx=[-1])
def rms_norm_naive(M, N, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=1) as i:
            ss = T.alloc_var("float32")
            ss = 0.0
            for j in T.serial(N):
                ss += A[i, j] * A[i, j]
            for j in T.serial(N):
                B[i, j] = A[i, j] / T.sqrt(ss / N + 1e-12)

    return main
