# T.allgather between the 6 blocks of a 2 x 3 grid (T.Scale("block"): the
# linear block index bx + 2 by) against a one-thread reference; tests/run/block_coll.sh.
import tilelang.language as T


def ag():
    @T.prim_func
    def main(X: T.Tensor((6, 2, 8), "float32"), Y: T.Tensor((6, 12, 8), "float32")):
        with T.Kernel(2, 3, threads=64) as (bx, by):
            with T.Scale("block") as (b, n):
                a = T.alloc_shared((2, 8), "float32")
                o = T.alloc_shared((12, 8), "float32")
                T.copy(X[b, 0, 0], a)
                T.allgather(a, o)
                T.copy(o, Y[b, 0, 0])

    return main


def ag_ref():
    @T.prim_func
    def main(X: T.Tensor((6, 2, 8), "float32"), Y: T.Tensor((6, 12, 8), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for g in T.serial(6):
                for p in T.serial(6):
                    for i in T.serial(2):
                        for j in T.serial(8):
                            Y[g, p * 2 + i, j] = X[p, i, j]

    return main
