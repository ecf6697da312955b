# ARGS: compile FILE --entry kern -D n=4
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            for i in T.Parallel(n)
                A[i] = 0.0

    return main
