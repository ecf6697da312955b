# ARGS: compile FILE --entry k --target c --dump-after split_grid
# T.sync_grid inside a loop cannot end a launch: pass split_grid makes the
# kernel cooperative (its blocks wait for each other at the barrier; not
# may_block: the listing has no may_block line; a grid workspace of the barrier's 64 bytes, zeroed by the launch) and keeps the
# barrier in the body, where the targets print it as a grid barrier
# (tests/run/sync_grid.sh runs such kernels on the C target).
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
