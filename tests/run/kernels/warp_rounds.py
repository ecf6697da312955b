# T.Scale("warp") tiles whose lanes take several rounds and a partial last
# one (8 x 33 = 264 elements: 8 rounds of 32, then lanes 0-7), and a block
# barrier that matters between two such copies (insert_sync, session 9).
# `rotate`: every warp copies its TM rows of X into its slice of the shared
# tile S, then copies the NEXT warp's slice (w + 1) % W to its rows of Y:
# the second copy reads what another warp wrote, so a barrier of the block
# must stand after the first copy's partial round (insert_sync: a conflict
# between warps); between a copy's full rounds and its own partial round
# none is needed (each lane touches only its warp's elements, the
# __syncwarp around the copy orders the warp's lanes) and none is placed.
# tests/unit/test_warp_rounds.c runs it thread by thread in the strict
# interpreter with the barrier (must pass) and without it (a planted bug:
# must fail); tests/run/warp_lanes.sh runs it on the C target against
# `rotate_ref` (one thread).
#   tilescale run tests/run/kernels/warp_rounds.py --entry rotate --check-against rotate_ref
import tilelang.language as T


def rotate(rows=64, cols=33, TM=8, W=4):
    BM = TM * W

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(T.ceildiv(rows, BM), threads=32 * W) as (bx):
            S = T.alloc_shared((BM, cols), "float32")
            with T.Scale("warp") as (w, nw):
                r0 = bx * BM + w * TM
                T.copy(X[r0:r0 + TM, 0:cols], S[w * TM:(w + 1) * TM, 0:cols])
                n = (w + 1) % W
                T.copy(S[n * TM:(n + 1) * TM, 0:cols], Y[r0:r0 + TM, 0:cols])

    return main


def rotate_ref(rows=64, cols=33, TM=8, W=4):
    BM = TM * W

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(1, threads=1) as (b):
            for i in T.serial(rows):
                for j in T.serial(cols):
                    blk = i // BM
                    w = (i % BM) // TM
                    Y[i, j] = X[blk * BM + ((w + 1) % W) * TM + i % TM, j]

    return main
