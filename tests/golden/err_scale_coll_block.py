# ARGS: compile FILE --entry kern --target c
# A collective inside T.Scale("block") on each block's own tile (between the
# blocks of one kernel) is refused with a clear error: the blocks of a
# launch are not guaranteed to be resident together (no cooperative launch),
# so a grid-wide exchange could hang; the message names the alternatives.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((4, 4, 8), "float32")):
        with T.Kernel(4, threads=128) as bx:
            with T.Scale("block") as (b, nb):
                a = T.alloc_shared((4, 8), "float32")
                T.copy(X[b, 0, 0], a)
                T.allreduce(a)
                T.copy(a, X[b, 0, 0])

    return main
