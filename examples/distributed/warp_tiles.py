# T.Scale("warp") with tile copies and fills shared by the warp's 32 lanes
# (issue 6, part C): every warp of a block owns TM rows of X; it copies
# them into its slice of a shared tile, fills its rows of F with its warp
# id + 1, copies the shared slice to Y (as float16: a converting copy) and
# sends it to the next rank's Z with a remote T.copy.  The copies and the
# fill are done by the 32 lanes together (element e of the flattened tile by
# lane e % 32, in full rounds of 32 and, when TM * cols is not a multiple of
# 32, a partial last round of the first lanes; a __syncwarp before and
# after); the remote copy by the lanes together too.
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


# Copies and fills of a warp's body inside serial loops and branches (run by
# all 32 lanes, the copies shared by them), beside statements of lane 0
# alone: warp w of block b handles chunks k = 0 .. NC - 1, rows r0 = ((b *
# NC + k) * W + w) * TM; even chunks copy X into S and S to Y, odd ones
# fill Y's rows with -(k + 1); lane 0 records k + 1 in seen[r0 // TM]; chunks
# past the end are skipped (the branch); a remote copy of S's rows goes to
# the next rank's Z in the even chunks.
#   tilescale run examples/distributed/warp_tiles.py --entry warp_loops --ranks 2 \
#       -D rows=200 -D cols=24 --check-against warp_loops_ref
def warp_loops(rows, cols, TM=4, W=4, NC=3):
    BM = TM * W
    NB = T.ceildiv(rows, BM * NC)

    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32"),
             Z: T.Tensor((rows, cols), "float32"), seen: T.Tensor((NB * NC * W,), "int32")):
        with T.Kernel(NB, threads=32 * W) as (bx):
            S = T.alloc_shared((BM, cols), "float32")
            me = T.get_rank()
            P = T.get_num_ranks()
            with T.Scale("warp") as (w, nw):
                for k in T.serial(NC):
                    r0 = ((bx * NC + k) * W + w) * TM
                    if r0 < rows:
                        if k % 2 == 0:
                            T.copy(X[r0:r0 + TM, 0:cols], S[w * TM:(w + 1) * TM, 0:cols])
                            T.copy(S[w * TM:(w + 1) * TM, 0:cols], Y[r0:r0 + TM, 0:cols])
                            T.copy(S[w * TM:(w + 1) * TM, 0:cols], Z[r0:r0 + TM, 0:cols], dst=(me + 1) % P)
                        else:
                            T.fill(Y[r0:r0 + TM, 0:cols], -(k + 1))
                        seen[r0 // TM] = k + 1

    return main


def warp_loops_ref(rows, cols, P, TM=4, W=4, NC=3):
    BM = TM * W
    NB = T.ceildiv(rows, BM * NC)

    @T.prim_func
    def main(X: T.Tensor((P, rows, cols), "float32"), Y: T.Tensor((P, rows, cols), "float32"),
             Z: T.Tensor((P, rows, cols), "float32"), seen: T.Tensor((P, NB * NC * W), "int32")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(rows):
                k = (i // BM) % NC
                for j in T.serial(cols):
                    if k % 2 == 0:
                        Y[r, i, j] = X[r, i, j]
                        Z[r, i, j] = X[(r + P - 1) % P, i, j]
                    else:
                        Y[r, i, j] = -(k + 1.0)
                if i % TM == 0:
                    seen[r, i // TM] = k + 1

    return main


# T.Scale("warpgroup") (TileScale's README): every warpgroup (128 threads) of
# the block runs the body as its own unit, a T.ws role of its threads, and
# T.view of a block tile is its part of it.  The block stages its BM rows
# of X in S; warpgroup g of n takes rows [g BM / n, (g + 1) BM / n) of S
# (T.FullRow), copies them to Y, sends them to the next rank's Z (a remote
# copy made by the warpgroup's threads), fills its part of F's columns
# (T.FullCol of a (BM, cols) tile, then copied out) with g + 1 and records
# n in tag[block, g].
#   tilescale run examples/distributed/warp_tiles.py --entry wg_tiles --ranks 2 \
#       -D rows=256 -D cols=48 --check-against wg_tiles_ref
def wg_tiles(rows, cols, BM=32, WG=2):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32"),
             Z: T.Tensor((rows, cols), "float32"), F: T.Tensor((rows, cols), "float32"),
             tag: T.Tensor((rows // BM, WG), "int32")):
        with T.Kernel(rows // BM, threads=128 * WG) as (bx):
            S = T.alloc_shared((BM, cols), "float32")
            G = T.alloc_shared((BM, cols), "float32")
            me = T.get_rank()
            P = T.get_num_ranks()
            T.copy(X[bx * BM, 0], S)
            with T.Scale("warpgroup") as (wg, nwg):
                Sw = T.view(S, layout=T.FullRow)
                Gw = T.view(G, layout=T.FullCol)
                T.copy(Sw, Y[bx * BM + wg * (BM // nwg), 0])
                T.copy(Sw, Z[bx * BM + wg * (BM // nwg), 0], dst=(me + 1) % P)
                T.fill(Gw, wg + 1)
                tag[bx, wg] = nwg
            T.copy(G, F[bx * BM, 0])

    return main


def wg_tiles_ref(rows, cols, P, BM=32, WG=2):
    @T.prim_func
    def main(X: T.Tensor((P, rows, cols), "float32"), Y: T.Tensor((P, rows, cols), "float32"),
             Z: T.Tensor((P, rows, cols), "float32"), F: T.Tensor((P, rows, cols), "float32"),
             tag: T.Tensor((P, rows // BM, WG), "int32")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(rows):
                for j in T.serial(cols):
                    Y[r, i, j] = X[r, i, j]
                    Z[r, i, j] = X[(r + P - 1) % P, i, j]
                    F[r, i, j] = T.cast(j // (cols // WG) + 1, "float32")
            for b in T.serial(rows // BM):
                for g in T.serial(WG):
                    tag[r, b, g] = WG

    return main
