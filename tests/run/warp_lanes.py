# T.Scale("warp") copies and fills dealt to the warp's 32 lanes over the
# flattened tile (issue 6, part C), also when the tile's element count is
# not a multiple of 32: full rounds (lane l: elements l, l + 32, ...) and a
# partial last round `if lane < count % 32` (op/comm.c, deal_lanes; before:
# the innermost dim's columns by lane c % 32, lanes idle on narrow tiles).
# `lanes`: every warp copies its TM rows of X into its slice of a shared
# tile, fills its rows of F with its id + 1 and copies the slice to Y
# (rows may run past the tensor's end: guarded).  `lanes_loops`: the same
# copies in a serial loop and a branch that differs between the warps.
# Both against `*_ref`, a one-thread kernel:
#   tilescale run tests/run/warp_lanes.py --entry lanes -D rows=70 -D cols=5 --check-against lanes_ref
import tilelang.language as T


def lanes(rows, cols, TM=8, W=4):
    BM = TM * W

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32"),
             F: T.Tensor((rows, cols), "float32")):
        with T.Kernel(T.ceildiv(rows, BM), threads=32 * W) as (bx):
            S = T.alloc_shared((BM, cols), "float32")
            with T.Scale("warp") as (w, nw):
                r0 = bx * BM + w * TM
                T.copy(X[r0:r0 + TM, 0:cols], S[w * TM:(w + 1) * TM, 0:cols])
                T.fill(F[r0:r0 + TM, 0:cols], w + 1)
                T.copy(S[w * TM:(w + 1) * TM, 0:cols], Y[r0:r0 + TM, 0:cols])

    return main


def lanes_ref(rows, cols, TM=8, W=4):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32"),
             F: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, threads=1) as (b):
            for i in T.serial(rows):
                for j in T.serial(cols):
                    Y[i, j] = X[i, j]
                    F[i, j] = (i // TM) % W + 1

    return main


def lanes_loops(rows, cols, TM=4, W=4, NC=3):
    BM = TM * W

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(T.ceildiv(rows, BM * NC), threads=32 * W) as (bx):
            S = T.alloc_shared((BM, cols), "float32")
            with T.Scale("warp") as (w, nw):
                for k in T.serial(NC):
                    r0 = ((bx * NC + k) * W + w) * TM
                    if r0 < rows:
                        T.copy(X[r0:r0 + TM, 0:cols], S[w * TM:(w + 1) * TM, 0:cols])
                        T.copy(S[w * TM:(w + 1) * TM, 0:cols], Y[r0:r0 + TM, 0:cols])

    return main


def lanes_loops_ref(rows, cols, TM=4, W=4, NC=3):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, threads=1) as (b):
            for i in T.serial(rows):
                for j in T.serial(cols):
                    Y[i, j] = X[i, j]

    return main
