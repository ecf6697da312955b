# ARGS: compile FILE --entry ws_rowmax --target cuda --dump-after insert_sync
# ENV: TILESCALE_CUDA_ARCH=sm_80
# Layout inference over a T.ws role's threads: the consumer role (threads [128, 256)) owns the
# accumulator C and the row maxima m, so they are laid out over its 4 warps (C: the mma.sync
# accumulator layout of a 2 x 2 warp grid, m: its rows) and live in registers.  Every thread
# loop the pass writes runs over the role's range (thread_range(128, extent=128)) with the
# layout's thread t - 128; partition_threads records the gemm's warps on the op
# (warps=[128, 256)); the row reduction spans two warps, so its scratch exchange gets the
# role's named barrier (barrier(id, 128)), never a block barrier; the rows minus their maxima
# go out as register column pairs.  The producer role's copies (A too: 16-byte vectors, since
# partition_threads sees the K loop's range, so k * 32 is affine) are cp.async and the
# producer's arrive an arrive_async_noinc (pass ws_async_copy); the mbarrier hand-over is as before.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ws_rowmax(M=64, N=64, K=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), R: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256) as bx:
            A_s = T.alloc_shared((M, block_K), "float16")
            B_s = T.alloc_shared((block_K, N), "float16")
            C = T.alloc_fragment((M, N), "float32")
            m = T.alloc_fragment((M,), "float32")
            full = T.alloc_barrier(arrive_count=128)
            free = T.alloc_barrier(arrive_count=128)
            with T.ws(1):
                T.clear(C)
            for k in range(K // block_K):
                with T.ws(0):
                    T.barrier_wait(free, (k + 1) % 2)
                    T.copy(A[0, k * block_K], A_s)
                    T.copy(B[k * block_K, 0], B_s)
                    T.barrier_arrive(full)
                with T.ws(1):
                    T.barrier_wait(full, k % 2)
                    T.gemm(A_s, B_s, C)
                    T.barrier_arrive(free)
            with T.ws(1):
                T.reduce_max(C, m, dim=1)
                for i, j in T.Parallel(M, N):
                    C[i, j] = C[i, j] - m[i]
                T.copy(C, R)

    return main
