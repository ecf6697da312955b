# ARGS: compile FILE --entry f --target c
# A second context in `with T.Kernel(...)` that is not do-nothing instrumentation
# is refused, naming it.
import tilelang
import tilelang.language as T


def f(n=32):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx, T.Kernel(1, threads=32) as by:
            A[0] = 1.0

    return main
