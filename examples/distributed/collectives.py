# Tile-level collectives of the hierarchical layer (doc/DISTRIBUTED.md):
# T.allreduce, T.allgather, T.reduce_scatter and T.all_to_all on tensors on
# the symmetric heap, called inside `with T.Scale("device")`, each against a
# reference that sees all ranks at once.
#   tilescale run examples/distributed/collectives.py --entry allreduce --ranks 4 \
#       -D rows=24 -D cols=40 --check-against allreduce_ref
import tilelang
import tilelang.language as T


def allreduce(rows, cols, blocks=3, op="sum", dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), dtype)):
        with T.Kernel(blocks, threads=128) as (bx):
            with T.Scale("device") as (dev_id, dev_num):
                T.allreduce(X, op=op)

    return main


def allreduce_ref(rows, cols, P, op="sum", dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((P, rows, cols), dtype)):
        with T.Kernel(1, threads=1) as (bx):
            for i in T.serial(rows):
                for j in T.serial(cols):
                    acc = T.alloc_var("float32")
                    acc = X[0, i, j]
                    for p in T.serial(P - 1):
                        if op == "sum":
                            acc = acc + X[p + 1, i, j]
                        elif op == "max":
                            acc = T.max(acc, X[p + 1, i, j])
                        else:
                            acc = T.min(acc, X[p + 1, i, j])
                    for p in T.serial(P):
                        X[p, i, j] = acc

    return main


def allgather(rows, cols, P, blocks=2, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((rows, cols), dtype), B: T.Tensor((P * rows, cols), dtype)):
        with T.Kernel(blocks, threads=128) as (bx):
            with T.Scale("device"):
                T.allgather(A, B)

    return main


def allgather_ref(rows, cols, P, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((P, rows, cols), dtype), B: T.Tensor((P, P * rows, cols), dtype)):
        with T.Kernel(P, threads=1) as (r):
            for s in T.serial(P):
                for i in T.serial(rows):
                    for j in T.serial(cols):
                        B[r, s * rows + i, j] = A[s, i, j]

    return main


def reduce_scatter(rows, cols, P, blocks=2, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((P * rows, cols), dtype), B: T.Tensor((rows, cols), dtype)):
        with T.Kernel(blocks, threads=128) as (bx):
            with T.Scale("device"):
                T.reduce_scatter(A, B)

    return main


def reduce_scatter_ref(rows, cols, P, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((P, P * rows, cols), dtype), B: T.Tensor((P, rows, cols), dtype)):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(rows):
                for j in T.serial(cols):
                    acc = T.alloc_var("float32")
                    acc = 0.0
                    for p in T.serial(P):
                        acc = acc + A[p, r * rows + i, j]
                    B[r, i, j] = acc

    return main


def all_to_all(chunk, cols, P, blocks=2, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((P * chunk, cols), dtype), B: T.Tensor((P * chunk, cols), dtype)):
        with T.Kernel(blocks, threads=128) as (bx):
            with T.Scale("device"):
                T.all_to_all(A, B)

    return main


def all_to_all_ref(chunk, cols, P, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((P, P * chunk, cols), dtype), B: T.Tensor((P, P * chunk, cols), dtype)):
        with T.Kernel(P, threads=1) as (r):
            for s in T.serial(P):
                for i in T.serial(chunk):
                    for j in T.serial(cols):
                        B[r, s * chunk + i, j] = A[s, r * chunk + i, j]

    return main


# T.Scale levels and a remote tile copy: every block of every rank sends its
# (block_M, cols) tile of X to the next rank's Y, tagged with its ids.  The
# warp and warpgroup bodies run once per unit, the units at the same time on
# CUDA: tag[bx, 2] gains sum(w) = 0 + 1 + 2 + 3 by atomic adds.
def shift(rows, cols, block_M=8):
    @T.prim_func
    def main(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32"),
             tag: T.Tensor((rows // block_M, 4), "float32")):
        with T.Kernel(rows // block_M, threads=128) as (bx):
            with T.Scale("device") as (dev_id, dev_num):
                tile = T.alloc_shared((block_M, cols), "float32")
                T.copy(X[bx * block_M, 0], tile)
                T.copy(tile, Y[bx * block_M, 0], dst=(dev_id + 1) % dev_num)
            with T.Scale("block") as (b, nb):
                tag[b, 0] = nb
            with T.Scale("warp") as (w, nw):
                if w == nw - 1:
                    tag[bx, 1] = nw
                T.atomic_add(tag[bx, 2], w)
            with T.Scale("warpgroup") as wg:
                tag[bx, 3] = wg

    return main


def shift_ref(rows, cols, P, block_M=8):
    @T.prim_func
    def main(X: T.Tensor((P, rows, cols), "float32"), Y: T.Tensor((P, rows, cols), "float32"),
             tag: T.Tensor((P, rows // block_M, 4), "float32")):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(rows):
                for j in T.serial(cols):
                    Y[r, i, j] = X[(r + P - 1) % P, i, j]
            for b in T.serial(rows // block_M):
                tag[r, b, 0] = rows // block_M
                tag[r, b, 1] = 4
                tag[r, b, 2] = tag[r, b, 2] + 6
                tag[r, b, 3] = 0

    return main
