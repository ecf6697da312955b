# ARGS: compile FILE --entry kern
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32")):
        with T.Kernel(1) as bx:
            S = T.alloc_shared((32, 16), "float16")
            V = T.view(S, shape=[16, 32], dtype="float32")
            T.copy(A[0:16, 0:32], V)

    return main
