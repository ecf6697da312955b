# ARGS: compile FILE --entry kern -D n=four
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 2)) as bx:
            T.clear(A)

    return main
