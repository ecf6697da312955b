# Remote tile copies (T.copy with dst= / src=) in the three shapes their
# lowering (src/op/comm.c) tells apart, each checked against a plain
# reference that sees every rank:
#   - a 2-D tile of a wider tensor (BN < N): one range per row;
#   - whole rows (BN == N): the tile is one contiguous range;
#   - tiles hanging over the tensor's end (M or N not a multiple of the
#     tile): a run-time test sends them element by element, guarded.
# Every block pushes its tile of X (staged in shared memory) into Y of rank
# r + 1, pulls the same tile of X from rank r - 1 into shared memory and
# stores it into Z, and pushes the staged tile straight from global memory
# into W of rank r + 1 (a global -> remote global range).
#   tilescale run examples/distributed/tile_copy.py --entry tile_copy --ranks 4 \
#       -D M=40 -D N=48 -D BM=16 -D BN=16 --check-against tile_copy_ref
import tilelang
import tilelang.language as T


def tile_copy(M, N, BM, BN, dtype="float32", threads=128):
    @T.prim_func
    def main(
        X: T.Tensor((M, N), dtype),
        Y: T.Tensor((M, N), dtype),
        Z: T.Tensor((M, N), dtype),
        W: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=threads) as (bx, by):
            me = T.get_rank()
            P = T.get_num_ranks()
            S = T.alloc_shared((BM, BN), dtype)
            R = T.alloc_shared((BM, BN), dtype)
            T.copy(X[by * BM, bx * BN], S)
            T.copy(S, Y[by * BM, bx * BN], dst=(me + 1) % P)
            T.copy(X[by * BM, bx * BN], R, src=(me + P - 1) % P)
            T.copy(R, Z[by * BM, bx * BN])
            T.copy(X[by * BM : by * BM + BM, bx * BN : bx * BN + BN], W[by * BM, bx * BN], dst_rank=(me + 1) % P)

    return main


def tile_copy_ref(M, N, P, dtype="float32"):
    @T.prim_func
    def main(
        X: T.Tensor((P, M, N), dtype),
        Y: T.Tensor((P, M, N), dtype),
        Z: T.Tensor((P, M, N), dtype),
        W: T.Tensor((P, M, N), dtype),
    ):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(M):
                for j in T.serial(N):
                    Y[r, i, j] = X[(r + P - 1) % P, i, j]
                    Z[r, i, j] = X[(r + P - 1) % P, i, j]
                    W[r, i, j] = X[(r + P - 1) % P, i, j]

    return main
