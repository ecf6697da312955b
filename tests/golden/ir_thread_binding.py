# ARGS: compile FILE --entry gemv --target cuda --emit ir -D N=64 -D K=32
# ENV: TILESCALE_CUDA_ARCH=sm_90
# Explicit thread programming (issue 8 D): T.get_thread_binding(axis) and
# T.thread_binding(begin, end, thread="threadIdx.y") are the thread index
# along one axis of threads= (threadIdx_x/y in the IR, split out of the flat
# thread id by the CUDA target); T.sync_threads() is a block barrier.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemv(N, K, BLOCK_N=16, BLOCK_K=8, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((K,), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, BLOCK_K)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.thread_binding(0, BLOCK_K, thread="threadIdx.y")
            part = T.alloc_shared((BLOCK_N, BLOCK_K), dtype)
            acc = T.alloc_local((1,), dtype)
            acc[0] = 0
            for bk in T.serial(K // BLOCK_K):
                acc[0] += A[bk * BLOCK_K + tk] * B[bn * BLOCK_N + tn, bk * BLOCK_K + tk]
            part[tn, tk] = acc[0]
            T.sync_threads()
            if tk == 0:
                for j in T.serial(1, BLOCK_K):
                    acc[0] += part[tn, j]
                C[bn * BLOCK_N + tn] = acc[0]

    return main
