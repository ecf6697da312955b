# ARGS: compile FILE --entry k
# T.sync_grid at the top level of the body ends one launch and starts the
# next (pass split_grid, tests/run/sync_grid.sh); inside a loop it would need
# a cooperative launch, which is not built: an error naming it.
import tilelang.language as T


def k():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(2, threads=128) as bx:
            for i in T.serial(2):
                A[bx + 2 * i] = 1.0
                T.sync_grid()
                A[bx + 2] = A[1 - bx]

    return main
