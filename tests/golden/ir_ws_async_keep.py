# ARGS: compile FILE --entry ws --target cuda --dump-after ws_async_copy
# ENV: TILESCALE_CUDA_ARCH=sm_80 TILESCALE_CUDA_WS_ASYNC=mbar
# Pass ws_async_copy asked for its cp.async.mbarrier.arrive form (TILESCALE_CUDA_WS_ASYNC=mbar)
# takes its wait form instead (the copies waited for before the arrive, which is safe here:
# async_commit, async_wait(0), the plain arrives) when a reader could see them through
# something other than the arrive that would wait for them: here the producer role (threads
# [0, 128)) copies a row of X and arrives on `full`, then arrives on `late` with nothing
# copied before it, and the consumer waits on `late` alone before reading the row.  As
# cp.async with an arrive_async on `full`, the row could still be in flight when `late`
# completes.  (tests/golden/ir_ws_async_noinc.py has an arrive_async rewrite.)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ws():
    @T.prim_func
    def main(X: T.Tensor((4, 64), "float32"), Y: T.Tensor((4, 64), "float32")):
        with T.Kernel(1, threads=256) as bx:
            tile = T.alloc_shared((64,), "float32")
            full = T.alloc_barrier(arrive_count=128)
            late = T.alloc_barrier(arrive_count=128)
            free = T.alloc_barrier(arrive_count=128)
            for k in range(4):
                with T.ws(0):
                    T.barrier_wait(free, (k + 1) % 2)
                    T.copy(X[k, :], tile)
                    T.barrier_arrive(full)
                    T.barrier_arrive(late)
                with T.ws(1):
                    T.barrier_wait(late, k % 2)
                    for i in T.Parallel(64):
                        Y[k, i] = tile[i]
                    T.barrier_arrive(free)

    return main
