# ARGS: compile FILE --entry kern
# A T.Parallel store of float4_e2m1fn elements at an odd offset would split
# bytes between threads: refused at the store.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(A: T.Tensor((4, 16), "float32"), Q: T.Tensor((4, 16), T.float4_e2m1fn)):
        with T.Kernel(1, threads=32) as bx:
            for i, j in T.Parallel(4, 15):
                Q[i, j + 1] = A[i, j]

    return main
