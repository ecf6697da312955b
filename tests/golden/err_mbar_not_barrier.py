# ARGS: compile FILE --entry k
# T.barrier_wait needs an mbarrier (a T.alloc_barrier buffer or one of its elements).
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64,), "float32")
            T.barrier_wait(S, 0)
            T.copy(A, S)

    return main
