# Warp-specialized GEMM: C = A @ B with a producer warp group that loads the
# tiles and a consumer warp group that runs the tensor-core gemm, handing the
# tiles over through mbarriers (T.alloc_barrier, T.ws, T.barrier_wait /
# T.barrier_arrive: TileLang's warp_specialize examples' surface), and a naive
# GEMM to check them against:
#
#   tilescale run examples/ws_gemm.py --entry ws_matmul -D M=256 -D N=256 -D K=512 --check-against matmul_naive
#   tilescale run examples/ws_gemm.py --entry ws_matmul_ring -D M=256 -D N=256 -D K=512 --check-against matmul_naive
#
# ws_matmul has one shared tile pair: the producer waits until the consumer
# is done with it ("free", whose first wait is on the phase before phase 0
# and returns at once), loads it and arrives on "full"; the consumer waits on
# "full", multiplies and arrives on "free".  ws_matmul_ring has `stages`
# tile pairs used in turn, one full/free pair of mbarriers each, so that the
# producer loads ahead of the consumer.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ws_matmul(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            full = T.alloc_barrier(arrive_count=128)
            free = T.alloc_barrier(arrive_count=128)

            with T.ws(1):
                T.clear(C_local)
            for k in range(T.ceildiv(K, block_K)):
                with T.ws(0):
                    T.barrier_wait(free, (k + 1) % 2)
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.barrier_arrive(full)
                with T.ws(1):
                    T.barrier_wait(full, k % 2)
                    T.gemm(A_shared, B_shared, C_local)
                    T.barrier_arrive(free)
            with T.ws(1):
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def ws_matmul_ring(M, N, K, block_M=128, block_N=128, block_K=64, stages=2, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((stages, block_M, block_K), dtype)
            B_shared = T.alloc_shared((stages, block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            # mbarriers 0 .. stages-1: tile s is full; stages .. 2 stages-1: tile s is free
            bars = T.alloc_barrier([128] * (2 * stages))

            with T.ws(0):
                T.clear(C_local)
            for k in range(T.ceildiv(K, block_K)):
                s = k % stages
                # the phase of this use of slot s (uses of a slot alternate parities)
                ph = (k // stages) % 2
                with T.ws(1):
                    T.mbarrier_wait_parity(bars[s + stages], ph ^ 1)
                    T.tma_copy(A[by * block_M, k * block_K], A_shared[s, :, :], barrier=bars[s])
                    T.tma_copy(B[k * block_K, bx * block_N], B_shared[s, :, :], barrier=bars[s])
                    T.mbarrier_arrive(bars[s])
                with T.ws(0):
                    T.mbarrier_wait_parity(bars[s], ph)
                    T.gemm(A_shared[s, :, :], B_shared[s, :, :], C_local)
                    T.mbarrier_arrive(bars[s + stages])
            with T.ws(0):
                T.copy(C_local, C[by * block_M, bx * block_N])

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
