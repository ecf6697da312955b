# T.Scale("warp") with tile copies and fills shared by the warp's 32 lanes
# (issue 6, part C): every warp of a block owns TM rows of X; it copies
# them into its slice of a shared tile, fills its rows of F with its warp
# id + 1, copies the shared slice to Y (as float16: a converting copy) and
# sends it to the next rank's Z with a remote T.copy.  The copies and the
# fill are done by the 32 lanes together (element e by lane e % 32, a
# __syncwarp before and after); the remote copy, like any other statement
# of the body, by lane 0.
#   tilescale run examples/distributed/warp_tiles.py --entry warp_tiles --ranks 2 \
#       -D rows=256 -D cols=40 --check-against warp_tiles_ref
import tilelang.language as T


def warp_tiles(rows, cols, TM=8, W=4):
    BM = TM * W

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float16"),
             F: T.Tensor((rows, cols), "float32"), Z: T.Tensor((rows, cols), "float32")):
        with T.Kernel(T.ceildiv(rows, BM), threads=32 * W) as (bx):
            S = T.alloc_shared((BM, cols), "float32")
            me = T.get_rank()
            P = T.get_num_ranks()
            with T.Scale("warp") as (w, nw):
                r0 = bx * BM + w * TM
                T.copy(X[r0:r0 + TM, 0:cols], S[w * TM:(w + 1) * TM, 0:cols])
                T.fill(F[r0:r0 + TM, 0:cols], w + 1)
                T.copy(S[w * TM:(w + 1) * TM, 0:cols], Y[r0:r0 + TM, 0:cols])
                T.copy(S[w * TM:(w + 1) * TM, 0:cols], Z[r0:r0 + TM, 0:cols], dst=(me + 1) % P)

    return main


def warp_tiles_ref(rows, cols, P, TM=8, W=4):
    @T.prim_func
    def main(X: T.Tensor((P, rows, cols), "float32"), Y: T.Tensor((P, rows, cols), "float16"),
             F: T.Tensor((P, rows, cols), "float32"), Z: T.Tensor((P, rows, cols), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(rows):
                for j in T.serial(cols):
                    Y[r, i, j] = X[r, i, j]
                    F[r, i, j] = (i // TM) % W + 1
                    Z[r, i, j] = X[(r + P - 1) % P, i, j]

    return main
