# ARGS: compile FILE --entry kern
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((8, 8, 4), "float16")):
        with T.Kernel(1) as bx:
            S = T.alloc_shared((16, 16), "float16")
            T.im2col(A, S, 0, 0, 3, 1, 1, 1)

    return main
