# ARGS: compile FILE --entry kern -D n=4
import tilelang.language as T


def kern(n, m):
    @T.prim_func
    def main(A: T.Tensor((n, m), "float32")):
        with T.Kernel(1) as bx:
            T.clear(A)

    return main
