# ARGS: compile FILE --entry nope
import tilelang.language as T


def kern(n):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            T.clear(A)

    return main
