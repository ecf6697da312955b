# ARGS: compile FILE --entry k
# mbarriers are initialised where they are allocated, once: T.alloc_barrier inside a loop is refused.
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in range(2):
                bar = T.alloc_barrier(128)
                T.barrier_arrive(bar)

    return main
