# ARGS: compile FILE --entry kern --target c
# A collective inside T.Scale("block") on each block's own tile runs between
# the blocks of the grid (a cooperative kernel, examples/block_coll.py); its
# staging has one slot per block, so the grid must be a constant: a grid of
# run-time extent is refused, naming the collective.
import tilelang.language as T


def kern():
    n = T.dynamic("n")

    @T.prim_func
    def main(X: T.Tensor((n, 4, 8), "float32")):
        with T.Kernel(n, threads=128) as bx:
            with T.Scale("block") as (b, nb):
                a = T.alloc_shared((4, 8), "float32")
                T.copy(X[b, 0, 0], a)
                T.allreduce(a)
                T.copy(a, X[b, 0, 0])

    return main
