# TileLang's register hints (T.annotate_producer_reg_dealloc,
# T.annotate_consumer_reg_alloc, T.set_max_nreg, T.inc_max_nreg,
# T.dec_max_nreg) and its asynchronous element copies
# (T.Parallel(..., prefer_async=True) with T.ptx_commit_group /
# T.ptx_wait_group), as minference's vertical-slash sparse attention writes
# them, in warp-specialized GEMMs checked against a naive one: the hints
# are IR statements the CUDA target prints as setmaxnreg (sm_90a) and the
# other targets skip; the copies are done when written.
# tests/run/reg_hints.sh runs them.
import tilelang
import tilelang.language as T


# Roles chosen by the thread index (TileLang's minference): warp group 1
# loads, lowering its register budget; warp group 0 multiplies, raising it.
@tilelang.jit(out_idx=[-1])
def ws_hinted(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            bars = T.alloc_barrier([128, 128])
            tid = T.get_thread_binding()
            if tid >= 128:
                T.annotate_producer_reg_dealloc()
                for k in T.serial(T.ceildiv(K, block_K)):
                    T.mbarrier_wait_parity(bars[1], (k + 1) % 2)
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.mbarrier_arrive(bars[0])
            else:
                T.annotate_consumer_reg_alloc()
                T.clear(C_local)
                for k in T.serial(T.ceildiv(K, block_K)):
                    T.mbarrier_wait_parity(bars[0], k % 2)
                    T.gemm(A_shared, B_shared, C_local)
                    T.mbarrier_arrive(bars[1])
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main


# The explicit forms inside T.ws roles, and element copies TileLang would
# make asynchronous, committed and waited for by hand.
@tilelang.jit(out_idx=[-1])
def ws_set_nreg(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            full = T.alloc_barrier(arrive_count=128)
            free = T.alloc_barrier(arrive_count=128)
            with T.ws(0):
                T.set_max_nreg(232, 1)
                T.inc_max_nreg(240)
                T.clear(C_local)
            with T.ws(1):
                T.set_max_nreg(40, 0)
                T.dec_max_nreg(32)
            for k in range(T.ceildiv(K, block_K)):
                with T.ws(1):
                    T.barrier_wait(free, (k + 1) % 2)
                    for i, j in T.Parallel(block_M, block_K, prefer_async=True, annotations={"parallel_async_without_async_commit_wait": True}):
                        A_shared[i, j] = A[by * block_M + i, k * block_K + j]
                    for i, j in T.Parallel(block_K, block_N, prefer_async=True):
                        B_shared[i, j] = B[k * block_K + i, bx * block_N + j]
                    T.ptx_commit_group()
                    T.ptx_wait_group(0)
                    T.barrier_arrive(full)
                with T.ws(0):
                    T.barrier_wait(full, k % 2)
                    T.gemm(A_shared, B_shared, C_local)
                    T.barrier_arrive(free)
            with T.ws(0):
                T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def matmul_naive(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=1) as i:
            for j in T.serial(N):
                acc = T.alloc_var(accum_dtype)
                acc = 0.0
                for k in T.serial(K):
                    acc += T.cast(A[i, k], accum_dtype) * T.cast(B[k, j], accum_dtype)
                C[i, j] = acc

    return main
