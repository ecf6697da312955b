# ARGS: compile FILE --entry kern --target c --dump-after lower_coll
# T.reduce_scatter between the 3 blocks of the grid (T.Scale("block"), each
# block's own shared tiles) after the pass lower_coll: the kernel is
# cooperative (split_grid) with a grid workspace of the barrier's 64 bytes
# and the call site's staging [3 blocks, 6, 8] floats; the expansion binds
# the staging's address (grid_workspace() + 64), copies the block's tile
# into its slot, a grid barrier, folds rows b * 2 .. b * 2 + 1 of every
# block's slot in block order (max), a second grid barrier before the
# staging may be written again.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((3, 6, 8), "float32"), Y: T.Tensor((3, 2, 8), "float32")):
        with T.Kernel(3, threads=64) as bx:
            with T.Scale("block") as (b, nb):
                a = T.alloc_shared((6, 8), "float32")
                o = T.alloc_shared((2, 8), "float32")
                T.copy(X[b, 0, 0], a)
                T.reduce_scatter(a, o, op="max")
                T.copy(o, Y[b, 0, 0])

    return main
