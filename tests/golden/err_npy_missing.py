# ARGS: run FILE --entry kern -D n=4 --in A=tests/golden/data/does_not_exist.npy
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            T.clear(A)

    return main
