# ARGS: compile FILE --entry kern --target c
# T.allgather between the 4 blocks of the grid (T.Scale("block")) needs a
# destination tile of 4 x the source's rows: refused, naming the sizes.
import tilelang.language as T


def kern():
    @T.prim_func
    def main(X: T.Tensor((4, 4, 8), "float32"), Y: T.Tensor((4, 8, 8), "float32")):
        with T.Kernel(4, threads=128) as bx:
            with T.Scale("block") as (b, nb):
                a = T.alloc_shared((4, 8), "float32")
                o = T.alloc_shared((8, 8), "float32")
                T.copy(X[b, 0, 0], a)
                T.allgather(a, o)
                T.copy(o, Y[b, 0, 0])

    return main
