# ARGS: compile FILE --entry kern --target c
# A collective between the warps of a block takes each warp's own tile
# (allocated in the T.Scale body); a tile of the whole block is one buffer
# that every warp would reduce into at once: refused, naming the tile.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((4, 8), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((4, 8), "float32")
            T.copy(X, a)
            with T.Scale("warp") as (w, nw):
                T.allreduce(a, op="max")
            T.copy(a, X)

    return main
