# ARGS: compile FILE --entry k
# T.sync_grid needs a cooperative launch, which is not built: an error naming it.
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(2, threads=128) as bx:
            A[bx] = 1.0
            T.sync_grid()
            A[bx + 2] = A[1 - bx]

    return main
