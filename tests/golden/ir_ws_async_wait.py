# ARGS: compile FILE --entry ws --target cuda --dump-after ws_async_copy
# ENV: TILESCALE_CUDA_ARCH=sm_80 TILESCALE_CUDA_WS_ASYNC=wait
# Pass ws_async_copy's WAIT form, asked for: the producer role (threads [0, 128)) copies a row
# of X into `tile` as cp.async, commits and waits for them (async_commit, async_wait(0)) and
# then makes its plain arrive on `full`.  (The default form on this kernel is
# tests/golden/ir_ws_roles.py's mbarrier_arrive_async_noinc; tests/golden/ir_ws_async_noinc_store.py
# has a producer that falls back to this form.)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ws():
    @T.prim_func
    def main(X: T.Tensor((4, 64), "float32"), Y: T.Tensor((4, 64), "float32")):
        with T.Kernel(1, threads=256) as bx:
            tile = T.alloc_shared((64,), "float32")
            full = T.alloc_barrier(arrive_count=128)
            free = T.alloc_barrier(arrive_count=128)
            for k in range(4):
                with T.ws(0):
                    T.barrier_wait(free, (k + 1) % 2)
                    T.copy(X[k, :], tile)
                    T.barrier_arrive(full)
                with T.ws(1):
                    T.barrier_wait(full, k % 2)
                    for i in T.Parallel(64):
                        Y[k, i] = tile[i]
                    T.barrier_arrive(free)

    return main
