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
