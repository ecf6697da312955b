# ARGS: compile FILE --entry kern -D n=4
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            f = lambda x: x + 1
            A[0] = f(1)

    return main
