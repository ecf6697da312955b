# ARGS: compile FILE --entry k
# An arrive straight in a T.ws role's body is one per thread of the role (128): an mbarrier
# expecting 64 arrivals per phase would get more than its phase expects.
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            bar = T.alloc_barrier(64)
            with T.ws(0):
                T.barrier_arrive(bar)

    return main
