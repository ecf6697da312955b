# T.put_block between pairs of ranks (TileScale's primitives/example_put_block.py
# kernel): every block pushes its slice of `src` into the same slice of `dst`
# on rank ^ 1.  Run on an even number of ranks:
#   tilescale run examples/distributed/put_block.py --entry kernel_ --ranks 2 \
#       -D M=8192 -D num_rank=2 -D block_M=1024 -D threads=128 --check-against put_block_ref
import tilelang
import tilelang.language as T


def kernel_(M, num_rank, block_M, threads):
    @T.prim_func
    def main(
        dst: T.Tensor((M), "float32"),
        src: T.Tensor((M), "float32"),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as (bx):
            rank = T.alloc_local([1], "uint64")
            num_rank = T.alloc_local([1], "uint64")
            rank[0] = T.get_rank()
            num_rank[0] = T.get_num_ranks()
            T.put_block(
                src=T.address_of(src[bx * block_M]),
                dst=T.address_of(dst[bx * block_M]),
                size=block_M,
                dst_pe=rank[0] ^ 1,
            )

    return main


# Reference: all P ranks at once (leading axis = rank; the CLI passes P).
def put_block_ref(M, P):
    @T.prim_func
    def main(
        dst: T.Tensor((P, M), "float32"),
        src: T.Tensor((P, M), "float32"),
    ):
        with T.Kernel(P, threads=1) as (r):
            for i in T.serial(M):
                dst[r, i] = src[r ^ 1, i]

    return main


# A put and a get inside T.ws roles (warp-specialized code): role 1's 128
# threads push X to the next rank's Y, role 0's 128 threads pull the
# previous rank's X into Z.  On CUDA pass lower_comm spreads each range over
# the role's own threads (thread tid - 128 of role 1 takes elements
# tid - 128, + 128, ...), not over the block's.
#   tilescale run examples/distributed/put_block.py --entry put_in_roles --ranks 2 \
#       -D N=3000 --check-against put_in_roles_ref
def put_in_roles(N):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"), Z: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            me = T.get_rank()
            P = T.get_num_ranks()
            with T.ws(1):
                T.put_block(src=T.address_of(X[0]), dst=T.address_of(Y[0]), size=N, dst_pe=(me + 1) % P)
            with T.ws(0):
                T.get_block(src=T.address_of(X[0]), dst=T.address_of(Z[0]), size=N, src_pe=(me + P - 1) % P)

    return main


def put_in_roles_ref(N, P):
    @T.prim_func
    def main(X: T.Tensor((P, N), "float32"), Y: T.Tensor((P, N), "float32"), Z: T.Tensor((P, N), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for r in T.serial(P):
                for i in T.serial(N):
                    Y[r, i] = X[(r + P - 1) % P, i]
                    Z[r, i] = X[(r + P - 1) % P, i]

    return main
