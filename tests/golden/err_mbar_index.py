# ARGS: compile FILE --entry k
# An mbarrier index outside what T.alloc_barrier made is refused at compile time.
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            bars = T.alloc_barrier([128, 128])
            T.mbarrier_arrive(bars[2])

    return main
