# ARGS: compile FILE --entry ws --target cuda --dump-after insert_sync
# ENV: TILESCALE_CUDA_ARCH=sm_80
# insert_sync in a warp-specialized kernel: the mbarrier inits go to one thread and get the
# one block barrier (before the first role); inside the loop the roles get no block barrier
# (what one role writes and the other reads is ordered by the program's mbarriers), a role's
# own conflicts (the consumer reading acc reversed, then writing it) get the role's named
# barrier `barrier(id, 128)`; the uniform code after the roles, reading what a role
# wrote, gets a block barrier.  Nests inside a role are spread over its threads only
# (thread_range(128, extent=64): t - 128).  The producer's copy is a cp.async and its arrive
# an arrive_async_noinc (pass ws_async_copy: cp.async.mbarrier.arrive.noinc, the arrival made
# once the copy has landed; no barrier added for it).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ws():
    @T.prim_func
    def main(X: T.Tensor((4, 64), "float32"), Y: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            tile = T.alloc_shared((64,), "float32")
            acc = T.alloc_shared((64,), "float32")
            rev = T.alloc_shared((64,), "float32")
            full = T.alloc_barrier(arrive_count=128)
            free = T.alloc_barrier(arrive_count=128)
            with T.ws(1):
                T.clear(acc)
            for k in range(4):
                with T.ws(0):
                    T.barrier_wait(free, (k + 1) % 2)
                    T.copy(X[k, :], tile)
                    T.barrier_arrive(full)
                with T.ws(1):
                    T.barrier_wait(full, k % 2)
                    for i in T.Parallel(64):
                        rev[i] = acc[63 - i]
                    for i in T.Parallel(64):
                        acc[i] = rev[i] + tile[i]
                    T.barrier_arrive(free)
            for i in T.Parallel(64):
                Y[i] = acc[i]

    return main
