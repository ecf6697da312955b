# ARGS: compile FILE --entry k --target cuda --dump-after thread_roles
# ENV: TILESCALE_CUDA_ARCH=sm_90
# `if tid < 256: ... elif tid < 384: ...` branches that hold tile ops become T.ws roles of
# those threads (pass thread_roles); a branch without tile ops (the `tid == 0` store) stays
# per-thread code, and so does one with a T.Parallel nest only (`tid < 64`: each thread runs
# the nest whole, as before).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def k():
    @T.prim_func
    def main(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=384) as bx:
            s = T.alloc_shared((128,), "float32")
            full = T.alloc_barrier(128)
            tid = T.get_thread_binding(0)
            if tid < 256:
                T.barrier_wait(full, 0)
                T.copy(s, Y)
            elif tid < 384:
                T.copy(X, s)
                T.barrier_arrive(full)
            if tid == 0:
                Y[0] = 1.0
            if tid < 64:
                for i in T.Parallel(4):
                    Y[i + 4] = 2.0
    return main
