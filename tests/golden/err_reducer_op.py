# ARGS: compile FILE --entry kern
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1) as bx:
            acc = T.alloc_reducer((64,), "float32", op="bitor")
            T.copy(acc, A[0:64])

    return main
