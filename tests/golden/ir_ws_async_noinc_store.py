# ARGS: compile FILE --entry ws --target cuda --dump-after ws_async_copy
# ENV: TILESCALE_CUDA_ARCH=sm_80
# Pass ws_async_copy's default NOINC form (cp.async.mbarrier.arrive.noinc alone, no plain
# arrive) where the producer role also stores to shared memory (`stamp`, read by the consumer
# after its wait on `full`): that store needs the release of a plain arrive, which the NOINC
# form drops, so the kernel takes the wait form instead (async_commit, async_wait(0), then
# the plain mbarrier_arrive).  tests/golden/ir_ws_roles.py has the NOINC rewrite.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ws():
    @T.prim_func
    def main(X: T.Tensor((4, 64), "float32"), Y: T.Tensor((4, 64), "float32")):
        with T.Kernel(1, threads=256) as bx:
            tile = T.alloc_shared((64,), "float32")
            stamp = T.alloc_shared((1,), "float32")
            full = T.alloc_barrier(arrive_count=128)
            free = T.alloc_barrier(arrive_count=128)
            for k in range(4):
                with T.ws(0):
                    T.barrier_wait(free, (k + 1) % 2)
                    T.copy(X[k, :], tile)
                    stamp[0] = k * 1.0
                    T.barrier_arrive(full)
                with T.ws(1):
                    T.barrier_wait(full, k % 2)
                    for i in T.Parallel(64):
                        Y[k, i] = tile[i] + stamp[0]
                    T.barrier_arrive(free)

    return main
