# ARGS: compile FILE --entry kern -D n=4
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            s = {1, 2}
            A[0] = len(s)

    return main
